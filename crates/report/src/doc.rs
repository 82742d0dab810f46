//! A tiny document model rendered to Markdown and to a self-contained HTML page.
//!
//! Exists so report.md and report.html are two renderings of one list of blocks: the same
//! cells, the same formatted numbers, in the same order — a number cannot appear in one and
//! differ in the other.

use std::fmt::Write as _;
use std::io::{self, BufRead as _, Write as IoWrite};
use std::path::{Path, PathBuf};

/// Column alignment of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A figure block: caption, file paths relative to the report directory, inline SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureBlock {
    /// Caption.
    pub caption: String,
    /// SVG path relative to the report.
    pub svg: String,
    /// PNG path relative to the report.
    pub png: String,
    /// The SVG document, inlined into the HTML page.
    pub inline_svg: InlineSvg,
}

/// The SVG a page inlines for a figure.
#[derive(Debug, Clone, PartialEq)]
pub enum InlineSvg {
    /// The document's text.
    Text(String),
    /// A file [`crate::figures::write`] wrote, holding `lines` newlines: copied into the page
    /// as the page is written, never held (a figure's text follows its data).
    File {
        /// The SVG file.
        path: PathBuf,
        /// Its newlines.
        lines: usize,
    },
}

impl From<String> for InlineSvg {
    fn from(text: String) -> Self {
        InlineSvg::Text(text)
    }
}

impl From<&str> for InlineSvg {
    fn from(text: &str) -> Self {
        InlineSvg::Text(text.to_string())
    }
}

/// One block of a report. Paragraph and cell text may hold `code` spans in backticks.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading of level 1–3.
    Heading(u8, String),
    /// A paragraph.
    Paragraph(String),
    /// A bullet list.
    List(Vec<String>),
    /// A table with a header row.
    Table {
        /// Column headers.
        header: Vec<String>,
        /// Alignment per column.
        align: Vec<Align>,
        /// Body rows.
        rows: Vec<Vec<String>>,
    },
    /// A figure.
    Figure(FigureBlock),
}

impl Block {
    /// A table from (header, alignment) columns and its body rows.
    pub fn table(columns: &[(&str, Align)], rows: Vec<Vec<String>>) -> Block {
        Block::Table {
            header: columns.iter().map(|(h, _)| (*h).to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows,
        }
    }
}

/// Opens a path tag inside cell or paragraph text (a private-use character no text holds);
/// [`markdown`] and [`html`] write it as the HTML comment the number guard reads.
const TAG_START: char = '\u{E000}';
/// Closes a path tag.
const TAG_END: char = '\u{E001}';

/// `text` (a figure) tagged with the JSON pointer of the value it renders, so the number guard
/// checks it against that value, not against any number of the JSON (see
/// `benchaudit_audit::guard`). Both documents write the tag as `<!-- ba:POINTER -->` right
/// after the figure: invisible in GitHub Markdown and in browsers.
#[must_use]
pub fn tagged(text: impl std::fmt::Display, path: &str) -> String {
    format!("{text}{TAG_START}ba:{path}{TAG_END}")
}

/// Writes the tags of [`tagged`] as HTML comments.
fn write_tags(s: String) -> String {
    if s.contains(TAG_START) {
        s.replace(TAG_START, "<!-- ").replace(TAG_END, " -->")
    } else {
        s
    }
}

/// `s` without the tags of [`tagged`] (for the terminal).
#[must_use]
pub fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut inside = false;
    for c in s.chars() {
        match c {
            TAG_START => inside = true,
            TAG_END => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// Renders blocks as GitHub-flavoured Markdown without path tags, for the terminal.
#[must_use]
pub fn plain_markdown(blocks: &[Block]) -> String {
    strip_tags(&markdown_tagged(blocks))
}

/// Renders blocks as GitHub-flavoured Markdown.
///
/// Exists for report.md; figures link the SVG and the PNG next to the report. Figures tagged
/// with [`tagged`] carry their JSON path as an HTML comment.
#[must_use]
pub fn markdown(blocks: &[Block]) -> String {
    write_tags(markdown_tagged(blocks))
}

fn markdown_tagged(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Block::Heading(level, text) => {
                let _ = writeln!(
                    out,
                    "{} {}\n",
                    "#".repeat(usize::from((*level).clamp(1, 6))),
                    text
                );
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "{text}\n");
            }
            Block::List(items) => {
                for item in items {
                    let _ = writeln!(out, "- {item}");
                }
                out.push('\n');
            }
            Block::Table {
                header,
                align,
                rows,
            } => {
                let cell = |s: &str| table_cell(s);
                let _ = writeln!(
                    out,
                    "| {} |",
                    header
                        .iter()
                        .map(|h| cell(h))
                        .collect::<Vec<_>>()
                        .join(" | ")
                );
                let rule: Vec<&str> = align
                    .iter()
                    .map(|a| if *a == Align::Right { "---:" } else { "---" })
                    .collect();
                let _ = writeln!(out, "|{}|", rule.join("|"));
                for row in rows {
                    let _ = writeln!(
                        out,
                        "| {} |",
                        row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
                    );
                }
                out.push('\n');
            }
            Block::Figure(f) => {
                let _ = writeln!(out, "![{}]({})\n", f.caption, f.svg);
                let _ = writeln!(out, "*{}* (PNG: [{}]({}))\n", f.caption, f.png, f.png);
            }
        }
    }
    out
}

/// A Markdown table cell's text: `|` escaped, and a line break or other control character
/// (a name read from a ledger may hold one) written as its escape (`\n`, `\u{0}`), so a row
/// stays one line of the table.
fn table_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for HTML element content and attribute values.
#[must_use]
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Inline text → HTML: escaped, with `code` spans as `<code>` and `**bold**` as `<strong>`.
fn inline(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            for (j, text) in part.split("**").enumerate() {
                if j % 2 == 1 {
                    let _ = write!(out, "<strong>{}</strong>", escape(text));
                } else {
                    out.push_str(&escape(text));
                }
            }
        }
    }
    out
}

/// Drops an XML declaration, so the SVG can sit inside HTML.
fn inline_svg(svg: &str) -> &str {
    let s = svg.trim_start();
    match (s.starts_with("<?xml"), s.find("?>")) {
        (true, Some(end)) => s[end + 2..].trim_start(),
        _ => s,
    }
}

/// A document with at least this many sections gets a table of contents.
const TOC_FROM: usize = 4;

/// Tables with more rows than this are collapsible (`<details>`).
const FOLD_ROWS: usize = 16;

const STYLE: &str = "nav.toc{border:1px solid #d0d0d0;padding:.5em 1em;margin:1em 0;display:inline-block}\
summary{cursor:pointer;color:#1f4e8c;margin:.5em 0}\
body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#191919;line-height:1.45}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}\
th,td{border:1px solid #d0d0d0;padding:4px 8px}th{background:#f2f2f2}\
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\
tr:nth-child(even) td{background:#fafafa}\
code{background:#f2f2f2;padding:1px 4px;border-radius:3px}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #e5e5e5}\
figcaption{font-style:italic;margin-top:.4em}";

/// Renders blocks as one self-contained HTML page (inline CSS, inline SVG figures).
///
/// Exists for report.html: it opens anywhere without the figure files next to it.
///
/// # Errors
/// A figure's SVG file cannot be read.
pub fn html(title: &str, blocks: &[Block]) -> io::Result<String> {
    let mut page = Vec::new();
    write_html(&mut page, title, blocks)?;
    String::from_utf8(page).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// [`html`] written into `out` as it is rendered, each figure file copied in from disk: the
/// page is never held whole.
///
/// # Errors
/// A figure's SVG file cannot be read, or `out` cannot be written.
pub fn write_html(out: &mut dyn IoWrite, title: &str, blocks: &[Block]) -> io::Result<()> {
    let tags = holds_tag(title, blocks)?;
    render_html(&mut Page { out, tags }, title, blocks, Figures::Inline)
}

/// The page [`html`] renders, with each SVG file replaced by an empty `<svg>` element holding
/// as many newlines: what a reader sees of it (the text the number guard checks, which drops
/// `<svg>` elements and keeps their line breaks) is the text of the whole page, without
/// holding the figures.
///
/// # Errors
/// A figure's SVG file cannot be read (only a file not written by [`crate::figures::write`]
/// is).
pub fn html_for_guard(title: &str, blocks: &[Block]) -> io::Result<String> {
    let tags = holds_tag(title, blocks)?;
    let mut page = Vec::new();
    render_html(
        &mut Page {
            out: &mut page,
            tags,
        },
        title,
        blocks,
        Figures::Placeholders,
    )?;
    String::from_utf8(page).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// How [`render_html`] writes a figure file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Figures {
    Inline,
    Placeholders,
}

/// The page being written: the path tags of [`tagged`] are written as HTML comments when the
/// page holds a tag start anywhere (as [`write_tags`] does on a whole page).
struct Page<'o> {
    out: &'o mut dyn IoWrite,
    tags: bool,
}

impl Page<'_> {
    fn text(&mut self, s: &str) -> io::Result<()> {
        if self.tags && (s.contains(TAG_START) || s.contains(TAG_END)) {
            let s = s.replace(TAG_START, "<!-- ").replace(TAG_END, " -->");
            self.out.write_all(s.as_bytes())
        } else {
            self.out.write_all(s.as_bytes())
        }
    }
}

/// Whether the page holds a tag start: in its text, or in a figure file.
fn holds_tag(title: &str, blocks: &[Block]) -> io::Result<bool> {
    let has = |s: &str| s.contains(TAG_START);
    if has(title) {
        return Ok(true);
    }
    let mut files = Vec::new();
    for block in blocks {
        let found = match block {
            Block::Heading(_, text) | Block::Paragraph(text) => has(text),
            Block::List(items) => items.iter().any(|i| has(i)),
            Block::Table { header, rows, .. } => {
                header.iter().any(|h| has(h)) || rows.iter().flatten().any(|c| has(c))
            }
            Block::Figure(f) => {
                let in_svg = match &f.inline_svg {
                    InlineSvg::Text(t) => has(t),
                    InlineSvg::File { path, .. } => {
                        files.push(path.as_path());
                        false
                    }
                };
                in_svg || has(&f.caption) || has(&f.svg) || has(&f.png)
            }
        };
        if found {
            return Ok(true);
        }
    }
    for path in files {
        if file_holds(path, TAG_START)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the file at `path` holds the character `c`, read in buffered pieces.
fn file_holds(path: &Path, c: char) -> io::Result<bool> {
    let mut bytes = [0; 4];
    let needle = c.encode_utf8(&mut bytes).as_bytes();
    let mut reader = io::BufReader::new(std::fs::File::open(path)?);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A character's bytes never hold a newline, so no character spans two lines.
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(false);
        }
        if line.windows(needle.len()).any(|w| w == needle) {
            return Ok(true);
        }
    }
}

/// Writes an SVG file into the page as [`inline_svg`] of its text would be.
fn copy_svg(page: &mut Page<'_>, path: &Path) -> io::Result<()> {
    let mut reader = io::BufReader::new(std::fs::File::open(path)?);
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    if !line.starts_with(b"<svg") {
        // Not a file of ours (those begin with the element): read it whole.
        let mut rest = line;
        io::Read::read_to_end(&mut reader, &mut rest)?;
        let text =
            String::from_utf8(rest).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        return page.text(inline_svg(&text));
    }
    loop {
        if line.is_empty() {
            return Ok(());
        }
        let text = std::str::from_utf8(&line)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        page.text(text)?;
        line.clear();
        reader.read_until(b'\n', &mut line)?;
    }
}

/// The SVG the guard's page holds for a figure ([`html_for_guard`]).
fn guard_svg(page: &mut Page<'_>, path: &Path, lines: usize) -> io::Result<()> {
    let mut start = [0u8; 4];
    let mut file = std::fs::File::open(path)?;
    let ours = io::Read::read_exact(&mut file, &mut start).is_ok() && &start == b"<svg";
    if ours {
        page.text("<svg>")?;
        page.text(&"\n".repeat(lines))?;
        page.text("</svg>")
    } else {
        copy_svg(page, path)
    }
}

fn render_html(
    page: &mut Page<'_>,
    title: &str,
    blocks: &[Block],
    figures: Figures,
) -> io::Result<()> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        escape(title)
    );
    // Big documents get a table of contents after their title (section headings link to it).
    let sections: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Heading(2, text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let toc = sections.len() >= TOC_FROM;
    let mut section = 0;
    for block in blocks {
        match block {
            Block::Heading(2, text) if toc => {
                section += 1;
                let _ = writeln!(out, "<h2 id=\"s{section}\">{}</h2>", inline(text));
            }
            Block::Heading(level, text) => {
                let l = (*level).clamp(1, 6);
                let _ = writeln!(out, "<h{l}>{}</h{l}>", inline(text));
                if l == 1 && toc && section == 0 {
                    out.push_str("<nav class=\"toc\"><strong>Contents</strong>\n<ol>\n");
                    for (i, s) in sections.iter().enumerate() {
                        let _ = writeln!(out, "<li><a href=\"#s{}\">{}</a></li>", i + 1, inline(s));
                    }
                    out.push_str("</ol></nav>\n");
                }
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text));
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for item in items {
                    let _ = writeln!(out, "<li>{}</li>", inline(item));
                }
                out.push_str("</ul>\n");
            }
            Block::Table {
                header,
                align,
                rows,
            } => {
                let class = |i: usize| {
                    if align.get(i) == Some(&Align::Right) {
                        " class=\"r\""
                    } else {
                        ""
                    }
                };
                // A long table (per task, per seed) folds away; the short ones stay open.
                let fold = rows.len() > FOLD_ROWS;
                if fold {
                    out.push_str("<details><summary>the full table (click to expand)</summary>\n");
                }
                out.push_str("<table>\n<thead><tr>");
                for (i, h) in header.iter().enumerate() {
                    let _ = write!(out, "<th{}>{}</th>", class(i), inline(h));
                }
                out.push_str("</tr></thead>\n<tbody>\n");
                for row in rows {
                    out.push_str("<tr>");
                    for (i, c) in row.iter().enumerate() {
                        let _ = write!(out, "<td{}>{}</td>", class(i), inline(c));
                    }
                    out.push_str("</tr>\n");
                    if out.len() >= 1 << 16 {
                        page.text(&out)?;
                        out.clear();
                    }
                }
                out.push_str("</tbody>\n</table>\n");
                if fold {
                    out.push_str("</details>\n");
                }
            }
            Block::Figure(f) => {
                out.push_str("<figure>\n");
                match &f.inline_svg {
                    InlineSvg::Text(text) => out.push_str(inline_svg(text)),
                    InlineSvg::File { path, lines } => {
                        page.text(&out)?;
                        out.clear();
                        match figures {
                            Figures::Inline => copy_svg(page, path)?,
                            Figures::Placeholders => guard_svg(page, path, *lines)?,
                        }
                    }
                }
                let _ = writeln!(
                    out,
                    "\n<figcaption>{} (<a href=\"{}\">SVG</a>, <a href=\"{}\">PNG</a>)</figcaption>\n</figure>",
                    inline(&f.caption),
                    escape(&f.svg),
                    escape(&f.png)
                );
            }
        }
        page.text(&out)?;
        out.clear();
    }
    out.push_str("</body>\n</html>\n");
    page.text(&out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn big_documents_get_contents_and_long_tables_fold() {
        let mut blocks = vec![Block::Heading(1, "Report".into())];
        for name in ["Pooled", "Per task", "Level gaps", "Scorers"] {
            blocks.push(Block::Heading(2, name.into()));
            blocks.push(Block::Paragraph("text".into()));
        }
        let row = |i: usize| vec![format!("T{i}"), "0.500".into()];
        blocks.push(Block::Table {
            header: vec!["task".into(), "mean".into()],
            align: vec![Align::Left, Align::Right],
            rows: (0..=FOLD_ROWS).map(row).collect(),
        });
        blocks.push(Block::Table {
            header: vec!["task".into(), "mean".into()],
            align: vec![Align::Left, Align::Right],
            rows: (0..3).map(row).collect(),
        });
        let page = html("t", &blocks).unwrap();
        assert!(
            page.contains("<li><a href=\"#s2\">Per task</a></li>"),
            "{page}"
        );
        assert!(page.contains("<h2 id=\"s4\">Scorers</h2>"), "{page}");
        let toc_at = page.find("<nav class=\"toc\">").unwrap();
        assert!(page.find("<h1>Report</h1>").unwrap() < toc_at);
        assert_eq!(
            page.matches("<details>").count(),
            1,
            "only the long table folds"
        );
        assert_eq!(page.matches("</details>").count(), 1);
        // A small document stays as it was.
        let small = html("t", &blocks[..3]).unwrap();
        assert!(!small.contains("<nav") && !small.contains("id=\"s1\""));
    }

    fn sample() -> Vec<Block> {
        vec![
            Block::Heading(1, "Report on `runs/x`".into()),
            Block::Paragraph("Mean 0.887 <b> & more".into()),
            Block::List(vec!["one `a|b`".into()]),
            Block::Table {
                header: vec!["policy".into(), "mean".into()],
                align: vec![Align::Left, Align::Right],
                rows: vec![vec!["a|b".into(), "0.500".into()]],
            },
            Block::Figure(FigureBlock {
                caption: "Spectrum".into(),
                svg: "figures/s.svg".into(),
                png: "figures/s.png".into(),
                inline_svg: "<?xml version=\"1.0\"?>\n<svg width=\"10\"><text>0.4</text></svg>"
                    .into(),
            }),
        ]
    }

    #[test]
    fn markdown_escapes_pipes_and_links_figures() {
        let md = markdown(&sample());
        assert!(md.starts_with("# Report on `runs/x`\n"));
        assert!(md.contains("| a\\|b | 0.500 |"));
        assert!(md.contains("|---|---:|"));
        assert!(md.contains("![Spectrum](figures/s.svg)"));
        assert!(md.contains("[figures/s.png](figures/s.png)"));
    }

    #[test]
    fn a_line_break_in_a_cell_keeps_the_row_on_one_line() {
        let table = Block::table(
            &[("policy", Align::Left), ("mean", Align::Right)],
            vec![vec!["evil\nname\u{0}".into(), "0.500".into()]],
        );
        let md = markdown(&[table]);
        assert_eq!(
            md,
            "| policy | mean |\n|---|---:|\n| evil\\nname\\u{0} | 0.500 |\n\n"
        );
        assert!(
            md.lines()
                .filter(|l| !l.is_empty())
                .all(|l| l.starts_with('|'))
        );
    }

    #[test]
    fn html_is_escaped_self_contained_and_inlines_svg() {
        let page = html("t <x>", &sample()).unwrap();
        assert!(page.contains("<title>t &lt;x&gt;</title>"));
        assert!(page.contains("<p>Mean 0.887 &lt;b&gt; &amp; more</p>"));
        assert!(page.contains("<code>runs/x</code>"));
        assert!(page.contains("<td class=\"r\">0.500</td>"));
        assert!(page.contains("<figure>\n<svg width=\"10\">"));
        assert!(!page.contains("<?xml"));
        assert!(!page.contains("src=\"http") && !page.contains("<link"));
    }

    #[test]
    fn a_figure_file_inlines_as_its_text_and_the_guard_page_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let svg = "<svg width=\"10\">\n<text>0.4 \u{E000}ba:/x\u{E001} &lt;b&gt;</text>\n</svg>\n";
        let path = dir.path().join("s.svg");
        std::fs::write(&path, svg).unwrap();
        let with = |inline_svg: InlineSvg| {
            let mut blocks = sample();
            blocks.push(Block::Paragraph(tagged("0.5", "/y")));
            if let Some(Block::Figure(f)) = blocks.get_mut(4) {
                f.inline_svg = inline_svg;
            }
            blocks
        };
        let text = with(InlineSvg::Text(svg.to_string()));
        let file = with(InlineSvg::File {
            path: path.clone(),
            lines: svg.matches('\n').count(),
        });
        let page = html("t", &text).unwrap();
        assert_eq!(html("t", &file).unwrap(), page);
        let mut streamed = Vec::new();
        write_html(&mut streamed, "t", &file).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), page);
        assert!(page.contains("<!-- ba:/x -->") && page.contains("0.5<!-- ba:/y -->"));
        let guard = html_for_guard("t", &file).unwrap();
        assert!(!guard.contains("0.4"), "the figure is left out");
        assert_eq!(
            benchaudit_audit::guard::html_to_text(&guard),
            benchaudit_audit::guard::html_to_text(&page)
        );
    }
}
