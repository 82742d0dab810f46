//! HTML to the text a reader sees (markup, styles, scripts and inline SVG removed).

/// The rendered text of an HTML page, line structure kept.
///
/// Exists so HTML is checked on what a reader sees: comments and `<style>`, `<script>`,
/// `<svg>` elements are dropped, other tags become a space, character references are decoded.
/// A path tag (`<!-- ba:POINTER -->`, see the module docs of [`crate::guard`]) is the one
/// comment kept, verbatim, so the figure it follows is checked at its path.
/// Newlines inside removed parts are kept so line numbers still point into the page.
#[must_use]
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while i < html.len() {
        let rest = &html[i..];
        let rest_lower = &lower[i..];
        if rest_lower.starts_with("<!--") {
            let end = rest_lower
                .find("-->")
                .map_or(rest.len(), |e| e + "-->".len());
            if rest.starts_with(super::scan::TAG_OPEN) && !rest[..end].contains('\n') {
                out.push_str(&rest[..end]);
            } else {
                push_newlines(&mut out, &rest[..end]);
            }
            i += end;
        } else if let Some(element) = ["style", "script", "svg"]
            .into_iter()
            .find(|name| opens_element(rest_lower, name))
        {
            let end = element_end(rest_lower, element);
            push_newlines(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with('<')
            && rest[1..]
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?')
        {
            let end = rest.find('>').map_or(rest.len(), |e| e + 1);
            // A code element is a code span, as Markdown's backticks are: quoted data.
            let tag = &rest_lower[..end];
            if tag == "<code>" || tag.starts_with("<code ") || tag == "</code>" {
                out.push('`');
            } else {
                out.push(' ');
            }
            push_newlines(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with('&') {
            let (decoded, used) = decode_entity(rest);
            out.push_str(&decoded);
            i += used;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

fn push_newlines(out: &mut String, removed: &str) {
    for _ in removed.matches('\n') {
        out.push('\n');
    }
}

/// Whether `s` starts with the opening tag of element `name` (`<svg>`, `<svg …>`).
fn opens_element(s: &str, name: &str) -> bool {
    s.strip_prefix('<')
        .and_then(|r| r.strip_prefix(name))
        .is_some_and(|r| r.starts_with(|c: char| c == '>' || c == '/' || c.is_ascii_whitespace()))
}

/// Byte length of the element starting at `s` (through its matching close tag, nesting
/// counted), or the rest of the text if it is never closed.
fn element_end(s: &str, name: &str) -> usize {
    let close = format!("</{name}");
    let mut depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if opens_element(rest, name) {
            let tag_end = rest.find('>').map_or(rest.len(), |e| e + 1);
            if !rest[..tag_end].ends_with("/>") {
                depth += 1;
            } else if depth == 0 {
                return i + tag_end;
            }
            i += tag_end;
        } else if rest.starts_with(&close) {
            let tag_end = rest.find('>').map_or(rest.len(), |e| e + 1);
            i += tag_end;
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return i;
            }
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    s.len()
}

/// Decodes one character reference at the start of `s`; returns the text and bytes used.
fn decode_entity(s: &str) -> (String, usize) {
    let Some(semi) = s
        .char_indices()
        .take(12)
        .find(|&(_, c)| c == ';')
        .map(|(i, _)| i)
    else {
        return ("&".into(), 1);
    };
    let name = &s[1..semi];
    let decoded = if let Some(num) = name.strip_prefix('#') {
        let code = if let Some(hex) = num.strip_prefix('x').or_else(|| num.strip_prefix('X')) {
            u32::from_str_radix(hex, 16).ok()
        } else {
            num.parse::<u32>().ok()
        };
        code.and_then(char::from_u32).map(String::from)
    } else {
        let c = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            "minus" => Some('−'),
            "ndash" => Some('–'),
            "mdash" => Some('—'),
            "times" => Some('×'),
            "middot" => Some('·'),
            "plusmn" => Some('±'),
            "le" => Some('≤'),
            "ge" => Some('≥'),
            "delta" => Some('δ'),
            "Delta" => Some('Δ'),
            "alpha" => Some('α'),
            "tau" => Some('τ'),
            "hellip" => Some('…'),
            _ => None,
        };
        c.map(String::from)
    };
    match decoded {
        Some(text) => (text, semi + 1),
        None => ("&".into(), 1),
    }
}
