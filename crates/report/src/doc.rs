//! A tiny document model rendered to Markdown and to a self-contained HTML page.
//!
//! Exists so report.md and report.html are two renderings of one list of blocks: the same
//! cells, the same formatted numbers, in the same order — a number cannot appear in one and
//! differ in the other.

use std::fmt::Write as _;

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
    pub inline_svg: String,
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
#[must_use]
pub fn html(title: &str, blocks: &[Block]) -> String {
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
                }
                out.push_str("</tbody>\n</table>\n");
                if fold {
                    out.push_str("</details>\n");
                }
            }
            Block::Figure(f) => {
                let _ = writeln!(
                    out,
                    "<figure>\n{}\n<figcaption>{} (<a href=\"{}\">SVG</a>, <a href=\"{}\">PNG</a>)</figcaption>\n</figure>",
                    inline_svg(&f.inline_svg),
                    inline(&f.caption),
                    escape(&f.svg),
                    escape(&f.png)
                );
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    write_tags(out)
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
        let page = html("t", &blocks);
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
        let small = html("t", &blocks[..3]);
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
        let page = html("t <x>", &sample());
        assert!(page.contains("<title>t &lt;x&gt;</title>"));
        assert!(page.contains("<p>Mean 0.887 &lt;b&gt; &amp; more</p>"));
        assert!(page.contains("<code>runs/x</code>"));
        assert!(page.contains("<td class=\"r\">0.500</td>"));
        assert!(page.contains("<figure>\n<svg width=\"10\">"));
        assert!(!page.contains("<?xml"));
        assert!(!page.contains("src=\"http") && !page.contains("<link"));
    }
}
