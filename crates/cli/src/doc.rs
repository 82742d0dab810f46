//! A tiny document model rendered to both Markdown and self-contained HTML, so the two reports
//! of a command carry exactly the same text (and the same numbers for the guard).

use std::fmt::Write;

/// A block of a report.
#[derive(Debug, Clone)]
pub enum Block {
    /// A heading of a level (1–3).
    Heading(u8, String),
    /// A paragraph.
    Para(String),
    /// A table: header and rows.
    Table(Vec<String>, Vec<Vec<String>>),
    /// A figure: caption and SVG text (HTML inlines it; Markdown links the files).
    Figure(String, String, String),
}

/// Markdown rendering.
pub fn markdown(blocks: &[Block]) -> String {
    let mut md = String::new();
    for b in blocks {
        match b {
            Block::Heading(l, t) => {
                let _ = writeln!(md, "{} {t}\n", "#".repeat(usize::from(*l)));
            }
            Block::Para(t) => {
                let _ = writeln!(md, "{t}\n");
            }
            Block::Table(h, rows) => {
                let _ = writeln!(md, "| {} |", h.join(" | "));
                let _ = writeln!(md, "|{}", "---|".repeat(h.len()));
                for r in rows {
                    let _ = writeln!(md, "| {} |", r.join(" | "));
                }
                md.push('\n');
            }
            Block::Figure(caption, file, _) => {
                let _ = writeln!(md, "![{caption}]({file})\n");
            }
        }
    }
    md
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn inline(s: &str) -> String {
    // **bold** only; everything else is text.
    let mut out = String::new();
    for (i, part) in esc(s).split("**").enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<strong>{part}</strong>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// HTML rendering: one self-contained page (inline CSS, figures inlined as SVG).
pub fn html(title: &str, blocks: &[Block]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>body{{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}}th{{background:#f3f3f3}}figure{{margin:1.5em 0}}figcaption{{font-style:italic}}</style></head><body>\n",
        esc(title)
    );
    for b in blocks {
        match b {
            Block::Heading(l, t) => {
                let _ = writeln!(h, "<h{l}>{}</h{l}>", inline(t));
            }
            Block::Para(t) => {
                let _ = writeln!(h, "<p>{}</p>", inline(t));
            }
            Block::Table(head, rows) => {
                h.push_str("<table><thead><tr>");
                for c in head {
                    let _ = write!(h, "<th>{}</th>", inline(c));
                }
                h.push_str("</tr></thead><tbody>\n");
                for r in rows {
                    h.push_str("<tr>");
                    for c in r {
                        let _ = write!(h, "<td>{}</td>", inline(c));
                    }
                    h.push_str("</tr>\n");
                }
                h.push_str("</tbody></table>\n");
            }
            Block::Figure(caption, _, svg) => {
                let _ = writeln!(
                    h,
                    "<figure>{svg}<figcaption>{}</figcaption></figure>",
                    inline(caption)
                );
            }
        }
    }
    h.push_str("</body></html>\n");
    h
}
