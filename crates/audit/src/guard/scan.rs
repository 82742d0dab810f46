//! Reading numbers out of prose: identifiers, signs, separators, units, dates and versions,
//! Markdown list markers and verbatim JSON strings (the rules of the module documentation).

use std::collections::HashSet;

use super::{NumberKind, ProseNumber};

/// Characters trimmed from either end of a whitespace-delimited token before it is compared
/// with JSON strings.
fn is_wrapping(c: char) -> bool {
    matches!(
        c,
        '`' | '\''
            | '"'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '<'
            | '>'
            | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | '*'
            | '|'
            | '“'
            | '”'
            | '‘'
            | '’'
    )
}

pub(super) fn trim_token(token: &str) -> &str {
    let t = token.trim_matches(is_wrapping);
    // A sentence-ending full stop is punctuation, not part of the token.
    let t = t.strip_suffix('.').unwrap_or(t);
    t.trim_matches(is_wrapping)
}

/// Replaces, by spaces of equal byte length, each token that is not a plain number and equals
/// a JSON string (or piece of one). Returns the masked text and the number of tokens masked.
pub(super) fn mask_verbatim(text: &str, strings: &HashSet<String>) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut masked = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let ws_len = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws_len]);
        rest = &rest[ws_len..];
        let token_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..token_len];
        let core = trim_token(token);
        if !core.is_empty()
            && core.chars().any(|c| c.is_ascii_digit())
            && !is_plain_number(core)
            && strings.contains(core)
        {
            // One space per character, so the columns of what follows stay those of the text.
            out.extend(std::iter::repeat_n(' ', token.chars().count()));
            masked += 1;
        } else {
            out.push_str(token);
        }
        rest = &rest[token_len..];
    }
    (out, masked)
}

/// The tokens [`mask_verbatim`] would mask if the JSON held them as strings: what a JSON
/// document must be searched for, so that its strings need not all be kept.
pub(super) fn verbatim_candidates(text: &str) -> HashSet<&str> {
    text.split_whitespace()
        .map(trim_token)
        .filter(|core| {
            !core.is_empty() && core.chars().any(|c| c.is_ascii_digit()) && !is_plain_number(core)
        })
        .collect()
}

/// Whether `token` scans as exactly one plain number and nothing else: no date or version,
/// no unit suffix (`4o` in a JSON string is a name such as a model's, not a figure).
fn is_plain_number(token: &str) -> bool {
    let start = token
        .chars()
        .next()
        .filter(|&c| is_sign(c))
        .map_or(0, char::len_utf8);
    matches!(
        parse_number(token, start),
        Some(Parsed::Number { end, kind, .. }) if end == token.len()
            && !matches!(kind, NumberKind::Date | NumberKind::Version)
    ) && token
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_digit() || c == '%')
}

/// The opening of a path tag: `0.887<!-- ba:/pooled/0/summary/mean -->`.
pub(super) const TAG_OPEN: &str = "<!-- ba:";
/// The close of a path tag.
pub(super) const TAG_CLOSE: &str = "-->";

/// A path tag found in prose: where it started (1-based line and column, in characters) and
/// the JSON pointer it names.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tag {
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) path: String,
}

/// Replaces each path tag (`<!-- ba:POINTER -->`) by one space per character and returns the
/// text and the tags in text order. One pass over the text.
pub(super) fn take_tags(text: &str) -> (String, Vec<Tag>) {
    let mut out = String::with_capacity(text.len());
    let mut tags = Vec::new();
    let (mut line, mut column) = (1usize, 1usize);
    let mut rest = text;
    while let Some(start) = rest.find(TAG_OPEN) {
        let before = &rest[..start];
        for c in before.chars() {
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        out.push_str(before);
        let after = &rest[start + TAG_OPEN.len()..];
        // A tag ends at its close on the same line; an unclosed one is ordinary text.
        let Some(end) = after
            .find(TAG_CLOSE)
            .filter(|&e| !after[..e].contains('\n'))
        else {
            out.push_str(TAG_OPEN);
            column += TAG_OPEN.chars().count();
            rest = after;
            continue;
        };
        let whole = &rest[start..start + TAG_OPEN.len() + end + TAG_CLOSE.len()];
        tags.push(Tag {
            line,
            column,
            path: after[..end].trim().to_string(),
        });
        let width = whole.chars().count();
        out.extend(std::iter::repeat_n(' ', width));
        column += width;
        rest = &rest[start + whole.len()..];
    }
    out.push_str(rest);
    (out, tags)
}

/// Replaces Markdown ordered-list markers (CommonMark rules, see the module docs) by spaces.
pub(super) fn mask_list_markers(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut count = 0;
    // Whether the previous line lets a list item start here.
    let mut may_start = true;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start().len();
        let body = &content[indent..];
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        let marker = (1..=9).contains(&digits)
            && body[digits..].starts_with(['.', ')'])
            && (body.len() == digits + 1 || body[digits + 1..].starts_with([' ', '\t']));
        let is_one = marker && body[..digits].trim_start_matches('0') == "1";
        if marker && (may_start || is_one) {
            out.push_str(&line[..indent]);
            out.extend(std::iter::repeat_n(' ', digits + 1));
            out.push_str(&line[indent + digits + 1..]);
            count += 1;
        } else {
            out.push_str(line);
        }
        let bullet = body.starts_with("- ") || body.starts_with("* ") || body.starts_with("+ ");
        may_start = body.is_empty() || marker || bullet || body.starts_with('#');
    }
    (out, count)
}

fn is_sign(c: char) -> bool {
    matches!(c, '-' | '+' | '−')
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a sign at a position after `prev` is a sign (not a hyphen or binary operator
/// between two values).
fn sign_allowed_after(prev: Option<char>) -> bool {
    prev.is_none_or(|p| !(p.is_alphanumeric() || matches!(p, '_' | ')' | ']' | '}' | '.' | '%')))
}

/// Whether a number may start with `.` after `prev` (`.5` after a space or bracket).
fn leading_dot_allowed_after(prev: Option<char>) -> bool {
    prev.is_none_or(|p| {
        p.is_whitespace() || matches!(p, '(' | '[' | '{' | '|' | '=' | '-' | '+' | '−')
    })
}

enum Parsed {
    /// A number ending at byte `end` (exclusive).
    Number {
        end: usize,
        kind: NumberKind,
        /// Normalised text to parse (digits, point, exponent; no separators, no `%`).
        normal: String,
        unit: f64,
    },
    /// Digits interleaved with letters (`515eb529`): an identifier ending at byte `end`.
    Identifier { end: usize },
}

/// The character starting at byte `i` of `text` (none at the end or inside a character).
fn char_at(text: &str, i: usize) -> Option<char> {
    text.get(i..).and_then(|rest| rest.chars().next())
}

/// The end of the run of ASCII digits starting at byte `i`.
fn digits_from(text: &str, mut i: usize) -> usize {
    while text.as_bytes().get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Parses a number whose digits (or leading `.`) start at byte `start`. Positions are byte
/// offsets; every character stepped over by `+ 1` is ASCII (digits, `.`, `,`, `e`, signs).
fn parse_number(text: &str, start: usize) -> Option<Parsed> {
    let at = |i: usize| char_at(text, i);
    let mut normal = String::new();
    let mut i = start;
    // Integer part, with thousands groups.
    let int_end = digits_from(text, i);
    let int_len = int_end - i;
    normal.push_str(&text[i..int_end]);
    i = int_end;
    if int_len > 0 && int_len <= 3 && at(start) != Some('0') {
        while at(i) == Some(',') && digits_from(text, i + 1) == i + 4 {
            normal.push_str(&text[i + 1..i + 4]);
            i += 4;
        }
    }
    // Date: YYYY-MM-DD.
    if int_len == 4 && i == int_end {
        let is_date = at(i) == Some('-')
            && digits_from(text, i + 1) == i + 3
            && at(i + 3) == Some('-')
            && digits_from(text, i + 4) == i + 6
            && !at(i + 6).is_some_and(is_word);
        if is_date {
            return Some(Parsed::Number {
                end: i + 6,
                kind: NumberKind::Date,
                normal: String::new(),
                unit: 0.0,
            });
        }
    }
    // Fraction.
    let mut decimals: i32 = 0;
    if at(i) == Some('.') && at(i + 1).is_some_and(|c| c.is_ascii_digit()) {
        let frac_end = digits_from(text, i + 1);
        decimals = i32::try_from(frac_end - i - 1).unwrap_or(i32::MAX);
        normal.push_str(&text[i..frac_end]);
        i = frac_end;
        // A second dotted group makes a version (or address): 0.1.0, 10.0.0.1.
        if at(i) == Some('.') && at(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            while at(i) == Some('.') && at(i + 1).is_some_and(|c| c.is_ascii_digit()) {
                i = digits_from(text, i + 1);
            }
            return Some(Parsed::Number {
                end: i,
                kind: NumberKind::Version,
                normal: String::new(),
                unit: 0.0,
            });
        }
    }
    if int_len == 0 && decimals == 0 {
        return None;
    }
    // Exponent.
    let mut exponent: i32 = 0;
    let mut kind = if decimals > 0 {
        NumberKind::Decimal
    } else {
        NumberKind::Integer
    };
    if matches!(at(i), Some('e' | 'E')) {
        let sign_len = usize::from(matches!(at(i + 1), Some('+' | '-')));
        let exp_start = i + 1 + sign_len;
        let exp_end = digits_from(text, exp_start);
        if exp_end > exp_start && !at(exp_end).is_some_and(is_word) {
            let exp_text = &text[i + 1..exp_end];
            exponent = exp_text.parse::<i32>().unwrap_or(i32::MAX).clamp(-400, 400);
            normal.push('e');
            normal.push_str(exp_text);
            kind = NumberKind::Scientific;
            i = exp_end;
        }
    }
    // Suffix: letters only = unit (number kept); digits among them = identifier. An
    // underscore ends the number (`_0.5_` is Markdown emphasis).
    if at(i).is_some_and(char::is_alphanumeric) {
        let mut j = i;
        while let Some(c) = at(j).filter(|c| c.is_alphanumeric()) {
            j += c.len_utf8();
        }
        if text[i..j].bytes().any(|b| b.is_ascii_digit()) {
            while let Some(c) = at(j).filter(|&c| is_word(c)) {
                j += c.len_utf8();
            }
            return Some(Parsed::Identifier { end: j });
        }
        let unit = 10f64.powi((exponent - decimals).clamp(-300, 300));
        return Some(Parsed::Number {
            end: j,
            kind,
            normal,
            unit,
        });
    }
    // Percent sign, directly or after one space.
    let percent_at = match at(i) {
        Some('%') => Some(i),
        Some(space @ (' ' | '\u{a0}' | '\u{202f}')) if at(i + space.len_utf8()) == Some('%') => {
            Some(i + space.len_utf8())
        }
        _ => None,
    };
    if let Some(p) = percent_at {
        kind = NumberKind::Percent;
        i = p + 1;
    }
    let unit = 10f64.powi((exponent - decimals).clamp(-300, 300));
    Some(Parsed::Number {
        end: i,
        kind,
        normal,
        unit,
    })
}

/// Every number of `text` (list markers and verbatim tokens already masked), in order.
pub(super) fn scan(text: &str) -> Vec<ProseNumber> {
    let mut numbers = Vec::new();
    scan_each(text, |n| numbers.push(n));
    numbers
}

/// Hands each number of `text` to `found`, in order, keeping none: one pass, work linear in
/// the text and memory independent of how many numbers it holds.
pub(super) fn scan_each(text: &str, mut found: impl FnMut(ProseNumber)) {
    // Line and column of byte `at`: numbers are found in order, so this cursor only moves
    // forward (no table of a position per char).
    let (mut at, mut line, mut column) = (0usize, 1usize, 1usize);
    let mut i = 0;
    while let Some(c) = char_at(text, i) {
        let width = c.len_utf8();
        if c.is_alphabetic() {
            i = skip_identifier(text, i);
            continue;
        }
        let prev = text[..i].chars().next_back();
        let next = char_at(text, i + width);
        let after_next = next.and_then(|n| char_at(text, i + width + n.len_utf8()));
        let (sign_len, negative) = if is_sign(c)
            && sign_allowed_after(prev)
            && (next.is_some_and(|n| n.is_ascii_digit())
                || (next == Some('.') && after_next.is_some_and(|n| n.is_ascii_digit())))
        {
            (width, c != '+')
        } else {
            (0, false)
        };
        let body = i + sign_len;
        let first = char_at(text, body);
        let starts_number = first.is_some_and(|c| c.is_ascii_digit())
            || (first == Some('.')
                && char_at(text, body + 1).is_some_and(|c| c.is_ascii_digit())
                && (sign_len > 0 || leading_dot_allowed_after(prev)));
        if !starts_number {
            i += width;
            continue;
        }
        match parse_number(text, body) {
            Some(Parsed::Number {
                end,
                kind,
                normal,
                unit,
            }) => {
                let value = match kind {
                    NumberKind::Date | NumberKind::Version => None,
                    _ => {
                        let magnitude = if normal.starts_with('.') {
                            format!("0{normal}")
                        } else {
                            normal
                        };
                        magnitude
                            .parse::<f64>()
                            .ok()
                            .map(|v| if negative { -v } else { v })
                    }
                };
                for c in text[at..i].chars() {
                    if c == '\n' {
                        line += 1;
                        column = 1;
                    } else {
                        column += 1;
                    }
                }
                at = i;
                // Dates and versions are compared with JSON strings without their sign.
                let written = match kind {
                    NumberKind::Date | NumberKind::Version => &text[body..end],
                    _ => &text[i..end],
                };
                found(ProseNumber {
                    text: written.to_string(),
                    value,
                    kind,
                    unit,
                    line,
                    column,
                });
                i = end.max(i + width);
            }
            Some(Parsed::Identifier { end }) => i = end.max(i + width),
            None => i += width,
        }
    }
}

/// Skips an identifier starting at byte `i`: a word and any `.`-joined word continuations.
fn skip_identifier(text: &str, mut i: usize) -> usize {
    loop {
        while let Some(c) = char_at(text, i).filter(|&c| is_word(c)) {
            i += c.len_utf8();
        }
        if char_at(text, i) == Some('.') && char_at(text, i + 1).is_some_and(is_word) {
            i += 1;
        } else {
            return i;
        }
    }
}
