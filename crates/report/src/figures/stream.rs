//! plotters' own SVG backend, one drawing call at a time, into a file.
//!
//! Why: `SVGBackend` holds the whole document in a `String`, and a figure's text follows its
//! data (the pass@k figure draws a dot for every task and k: 10 MB at 1 000 seeds). Each call
//! here is made on a fresh `SVGBackend` over a scratch string, which then holds the document's
//! opening tag, the one element the call drew and the closing tag; the element alone goes to
//! the file. plotters' backend keeps no state between calls but its open `<svg>`, so the file
//! is byte for byte the document one backend would have built (a test draws every figure kind
//! both ways).

use std::cell::Cell;
use std::io::{self, Write};

use plotters::backend::SVGBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// What `SVGBackend` writes when it is presented with the `<svg>` element still open; the
/// caller writes it after the drawing area is dropped ([`PerCall::close`]).
pub(super) const CLOSE: &str = "</svg>\n";

type Drawn = Result<(), DrawingErrorKind<io::Error>>;

/// An SVG document written to `out` as it is drawn, `from` replaced with `to` in every element
/// (as `str::replace` on the whole text would: neither holds a `<` or a line break).
pub(super) struct PerCall<'a, W: Write> {
    out: &'a mut W,
    size: (u32, u32),
    scratch: String,
    /// The opening tag every scratch document starts with.
    open: String,
    from: &'a str,
    to: &'a str,
    /// Line breaks written.
    lines: &'a Cell<usize>,
}

impl<'a, W: Write> PerCall<'a, W> {
    /// Writes the document's opening tag.
    pub(super) fn new(
        out: &'a mut W,
        size: (u32, u32),
        (from, to): (&'a str, &'a str),
        lines: &'a Cell<usize>,
    ) -> io::Result<Self> {
        let mut scratch = String::new();
        drop(SVGBackend::with_string(&mut scratch, size));
        let open = scratch
            .strip_suffix(CLOSE)
            .ok_or_else(|| io::Error::other("plotters' SVG backend wrote no closing </svg>"))?
            .to_string();
        let mut me = Self {
            out,
            size,
            scratch: String::new(),
            open: String::new(),
            from,
            to,
            lines,
        };
        me.emit(&open)?;
        me.open = open;
        Ok(me)
    }

    fn emit(&mut self, text: &str) -> io::Result<()> {
        self.lines
            .set(self.lines.get() + text.matches('\n').count());
        let mut pieces = text.split(self.from);
        if let Some(first) = pieces.next() {
            self.out.write_all(first.as_bytes())?;
        }
        for piece in pieces {
            self.out.write_all(self.to.as_bytes())?;
            self.out.write_all(piece.as_bytes())?;
        }
        Ok(())
    }

    /// Makes one call on a fresh backend and writes the element it drew.
    fn call(&mut self, draw: impl FnOnce(&mut SVGBackend<'_>) -> Drawn) -> Drawn {
        self.scratch.clear();
        {
            let mut svg = SVGBackend::with_string(&mut self.scratch, self.size);
            draw(&mut svg)?;
            svg.present()?;
        }
        let element = self
            .scratch
            .strip_prefix(self.open.as_str())
            .and_then(|s| s.strip_suffix(CLOSE))
            .ok_or_else(|| {
                DrawingErrorKind::DrawingError(io::Error::other(
                    "plotters' SVG backend wrote outside the element it was asked for",
                ))
            })?
            .to_string();
        self.emit(&element).map_err(DrawingErrorKind::DrawingError)
    }

    /// Closes the document in `out` once its drawing area is gone.
    pub(super) fn close(out: &mut W, lines: &Cell<usize>) -> io::Result<()> {
        out.write_all(CLOSE.as_bytes())?;
        lines.set(lines.get() + 1);
        out.flush()
    }
}

impl<W: Write> DrawingBackend for PerCall<'_, W> {
    type ErrorType = io::Error;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Drawn {
        Ok(())
    }

    fn present(&mut self) -> Drawn {
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        self.call(|b| b.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        self.call(|b| b.draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.call(|b| b.draw_rect(upper_left, bottom_right, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        self.call(|b| b.draw_path(path, style))
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.call(|b| b.draw_circle(center, radius, style, fill))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn {
        self.call(|b| b.fill_polygon(vert, style))
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Drawn {
        self.call(|b| b.draw_text(text, style, pos))
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let mut scratch = String::new();
        SVGBackend::with_string(&mut scratch, self.size).estimate_text_size(text, style)
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, (iw, ih): (u32, u32), src: &[u8]) -> Drawn {
        self.call(|b| b.blit_bitmap(pos, (iw, ih), src))
    }
}
