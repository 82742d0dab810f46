//! The forged answers and the one table that states each one's quality relative to the
//! sample's target. Every forgery is built from the sample alone (its target, its choices and
//! the numbers in its input) and the targets of the other probed samples, so the battery needs
//! no model and no knowledge of the task beyond what its dataset says.
//!
//! | forgery | how it is built | free text | number | multiple choice |
//! |---|---|---|---|---|
//! | `target` | the target in the answer format the scorer accepts (see below) | anchor | anchor | anchor |
//! | `target_as_answer_line` … `target_as_boxed` | the target in each other answer format | equal | equal | equal |
//! | `numeric_form` | the target as another spelling of the same number (`5.0` for `5`) | n/a | equal | n/a |
//! | `choice_text` | the correct option's text instead of its letter | n/a | n/a | equal |
//! | `correct_mentions_other` | the correct letter, then a sentence naming another option | n/a | n/a | equal |
//! | `other_target` | another probed sample's target (not one of this sample's) | lower | lower | n/a |
//! | `other_option` | the letter of a wrong option | n/a | n/a | lower |
//! | `empty` | the empty string | lower | lower | lower |
//! | `refusal` | a sentence declining to answer | lower | lower | lower |
//! | `garbage` | a fixed sentence with no answer in it | lower | lower | lower |
//! | `every_candidate` | the target inside the list of every candidate, in ascending order: every option letter; every number in the input; every probed sample's target | lower | lower | lower |
//! | `prefixed` | a wrong answer containing the target: `1` before a number (`15` for `5`), `not ` before a text | lower | lower | n/a |
//! | `negated` | the number with its sign flipped (`-21` for `21`) | n/a | lower | n/a |
//! | `near_miss` | the number with its last digit changed by one (`43` for `42`, `3.15` for `3.14`) | n/a | lower | n/a |
//! | `wrong_mentions_correct` | a wrong letter, then a sentence naming the correct option | n/a | n/a | lower |
//!
//! **The answer format.** A scorer reads the answer out of free text in the way its task's
//! prompt asks for (`ANSWER: 5`, a bare `Yes` at the start, `\boxed{5}`). The audit does not
//! guess: it scores the target in each [`Format`] first, and the anchor is the target in the
//! first format the scorer accepts on every probed sample (or, when none does, the format it
//! accepts on most). Every other forgery is written in that same format, so only the content
//! differs from the anchor; the target in the other formats are equal-quality forgeries, and a
//! scorer that rejects them grades the format.
//!
//! A forgery that would equal one of the sample's targets (after trimming and ignoring case)
//! is not built for that sample.

use serde::{Deserialize, Serialize};

use crate::battery::Quality;

/// How an answer is written around its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `ANSWER: x`, the line most Inspect prompt templates ask for.
    AnswerLine,
    /// `x` alone.
    Bare,
    /// `The answer is x.`
    Sentence,
    /// `\boxed{x}`, as mathematics prompts ask.
    Boxed,
}

impl Format {
    /// Every format, in the order the anchor's format is chosen.
    pub const ALL: [Format; 4] = [
        Format::AnswerLine,
        Format::Bare,
        Format::Sentence,
        Format::Boxed,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Format::AnswerLine => "answer_line",
            Format::Bare => "bare",
            Format::Sentence => "sentence",
            Format::Boxed => "boxed",
        }
    }

    /// `content` written in this format.
    pub fn write(self, content: &str) -> String {
        match self {
            Format::AnswerLine => format!("ANSWER: {content}"),
            Format::Bare => content.to_string(),
            Format::Sentence => format!("The answer is {content}."),
            Format::Boxed => format!("\\boxed{{{content}}}"),
        }
    }

    /// The name of the forgery that writes the target in this format.
    pub fn forgery(self) -> Forgery {
        match self {
            Format::AnswerLine => Forgery::TargetAsAnswerLine,
            Format::Bare => Forgery::TargetAsBare,
            Format::Sentence => Forgery::TargetAsSentence,
            Format::Boxed => Forgery::TargetAsBoxed,
        }
    }
}

/// The kinds of forged answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forgery {
    /// The target in the chosen format.
    Target,
    /// The target as `ANSWER: x`.
    TargetAsAnswerLine,
    /// The target alone.
    TargetAsBare,
    /// The target in a sentence.
    TargetAsSentence,
    /// The target boxed.
    TargetAsBoxed,
    /// Another spelling of the same number.
    NumericForm,
    /// The correct option's text instead of its letter.
    ChoiceText,
    /// The correct letter, then another option named in prose.
    CorrectMentionsOther,
    /// Another sample's target.
    OtherTarget,
    /// A wrong option's letter.
    OtherOption,
    /// Nothing.
    Empty,
    /// A refusal.
    Refusal,
    /// No answer at all.
    Garbage,
    /// The target among every candidate.
    EveryCandidate,
    /// A wrong answer containing the target.
    Prefixed,
    /// The number with its sign flipped.
    Negated,
    /// The number off by one in its last digit.
    NearMiss,
    /// A wrong letter, then the correct option named in prose.
    WrongMentionsCorrect,
}

/// What kind of answer a sample asks for, read off its target and choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// Anything else.
    FreeText,
    /// The target is a number.
    Number,
    /// The sample has choices and its target is an option letter.
    MultipleChoice,
}

impl AnswerKind {
    /// Every kind, in table order.
    pub const ALL: [AnswerKind; 3] = [
        AnswerKind::FreeText,
        AnswerKind::Number,
        AnswerKind::MultipleChoice,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            AnswerKind::FreeText => "free text",
            AnswerKind::Number => "number",
            AnswerKind::MultipleChoice => "multiple choice",
        }
    }
}

const REFUSAL: &str = "I cannot answer this question.";
const GARBAGE: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit.";

impl Forgery {
    /// Every forgery, in table order.
    pub const ALL: [Forgery; 18] = [
        Forgery::Target,
        Forgery::TargetAsAnswerLine,
        Forgery::TargetAsBare,
        Forgery::TargetAsSentence,
        Forgery::TargetAsBoxed,
        Forgery::NumericForm,
        Forgery::ChoiceText,
        Forgery::CorrectMentionsOther,
        Forgery::OtherTarget,
        Forgery::OtherOption,
        Forgery::Empty,
        Forgery::Refusal,
        Forgery::Garbage,
        Forgery::EveryCandidate,
        Forgery::Prefixed,
        Forgery::Negated,
        Forgery::NearMiss,
        Forgery::WrongMentionsCorrect,
    ];

    /// Stable name (as serialised).
    pub fn name(self) -> &'static str {
        match self {
            Forgery::Target => "target",
            Forgery::TargetAsAnswerLine => "target_as_answer_line",
            Forgery::TargetAsBare => "target_as_bare",
            Forgery::TargetAsSentence => "target_as_sentence",
            Forgery::TargetAsBoxed => "target_as_boxed",
            Forgery::NumericForm => "numeric_form",
            Forgery::ChoiceText => "choice_text",
            Forgery::CorrectMentionsOther => "correct_mentions_other",
            Forgery::OtherTarget => "other_target",
            Forgery::OtherOption => "other_option",
            Forgery::Empty => "empty",
            Forgery::Refusal => "refusal",
            Forgery::Garbage => "garbage",
            Forgery::EveryCandidate => "every_candidate",
            Forgery::Prefixed => "prefixed",
            Forgery::Negated => "negated",
            Forgery::NearMiss => "near_miss",
            Forgery::WrongMentionsCorrect => "wrong_mentions_correct",
        }
    }

    /// How it is built, for the table.
    pub fn construction(self) -> &'static str {
        match self {
            Forgery::Target => "the target in the answer format the scorer accepts",
            Forgery::TargetAsAnswerLine => "the target as `ANSWER: x`",
            Forgery::TargetAsBare => "the target alone",
            Forgery::TargetAsSentence => "the target as `The answer is x.`",
            Forgery::TargetAsBoxed => "the target as `\\boxed{x}`",
            Forgery::NumericForm => "another spelling of the same number (`5.0` for `5`)",
            Forgery::ChoiceText => "the correct option's text instead of its letter",
            Forgery::CorrectMentionsOther => {
                "the correct letter, then a sentence naming another option"
            }
            Forgery::OtherTarget => "another probed sample's target",
            Forgery::OtherOption => "the letter of a wrong option",
            Forgery::Empty => "the empty string",
            Forgery::Refusal => "a sentence declining to answer",
            Forgery::Garbage => "a fixed sentence with no answer in it",
            Forgery::EveryCandidate => {
                "the target inside the ascending list of every candidate (every option letter, every number in the input, every probed target)"
            }
            Forgery::Prefixed => {
                "a wrong answer containing the target (`1` before a number, `not ` before a text)"
            }
            Forgery::Negated => "the number with its sign flipped",
            Forgery::NearMiss => "the number with its last digit changed by one",
            Forgery::WrongMentionsCorrect => {
                "a wrong letter, then a sentence naming the correct option"
            }
        }
    }
}

/// The table: the declared quality of `forgery` for an answer of `kind`; `None` = not built.
pub fn intended(kind: AnswerKind, forgery: Forgery) -> Option<Quality> {
    use AnswerKind::*;
    use Forgery::*;
    use Quality::*;
    Some(match (forgery, kind) {
        (Target, _) => Anchor,
        (TargetAsAnswerLine | TargetAsBare | TargetAsSentence | TargetAsBoxed, _) => Equal,
        (NumericForm, Number) => Equal,
        (ChoiceText | CorrectMentionsOther, MultipleChoice) => Equal,
        (OtherTarget, FreeText | Number) => Lower,
        (OtherOption | WrongMentionsCorrect, MultipleChoice) => Lower,
        (Empty | Refusal | Garbage | EveryCandidate, _) => Lower,
        (Prefixed, FreeText | Number) => Lower,
        (Negated | NearMiss, Number) => Lower,
        _ => return None,
    })
}

/// One sample, as far as forging needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Sample id.
    pub id: String,
    /// The input as text.
    #[serde(default)]
    pub input: String,
    /// Accepted targets (any one is correct).
    pub targets: Vec<String>,
    /// Options, for multiple choice.
    #[serde(default)]
    pub choices: Option<Vec<String>>,
}

fn letter(i: usize) -> Option<char> {
    u8::try_from(i)
        .ok()
        .filter(|i| *i < 26)
        .map(|i| (b'A' + i) as char)
}

fn letter_index(s: &str) -> Option<usize> {
    let mut chars = s.trim().chars();
    let c = chars.next()?;
    (chars.next().is_none() && c.is_ascii_uppercase()).then(|| (c as u8 - b'A') as usize)
}

/// A number as the target writes it: digits with an optional sign, decimal point and
/// thousands commas.
fn number(s: &str) -> Option<f64> {
    let t = s.trim().replace(',', "");
    let body = t.strip_prefix('-').unwrap_or(&t);
    let ok = !body.is_empty()
        && body.chars().all(|c| c.is_ascii_digit() || c == '.')
        && body.chars().filter(|c| *c == '.').count() <= 1
        && body.chars().any(|c| c.is_ascii_digit());
    if ok { t.parse().ok() } else { None }
}

impl Sample {
    /// The kind of answer it asks for.
    pub fn kind(&self) -> AnswerKind {
        let Some(first) = self.targets.first() else {
            return AnswerKind::FreeText;
        };
        if let Some(choices) = &self.choices
            && self
                .targets
                .iter()
                .all(|t| letter_index(t).is_some_and(|i| i < choices.len()))
        {
            return AnswerKind::MultipleChoice;
        }
        if number(first).is_some() {
            AnswerKind::Number
        } else {
            AnswerKind::FreeText
        }
    }

    fn is_target(&self, text: &str) -> bool {
        let norm = |s: &str| s.trim().to_lowercase();
        let t = norm(text);
        self.targets.iter().any(|x| norm(x) == t)
            || number(text).is_some_and(|v| self.targets.iter().any(|x| number(x) == Some(v)))
    }
}

/// Every number written in `text` (digits with an optional decimal part; a `-` directly before
/// the digits and after a space or the start counts as a sign), in order of appearance.
pub fn numbers_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let start = if i > 0 && chars[i - 1] == '-' && (i == 1 || chars[i - 2].is_whitespace())
            {
                i - 1
            } else {
                i
            };
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
                j += 1;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
            }
            if j == chars.len() || !chars[j].is_alphabetic() {
                out.push(chars[start..j].iter().collect());
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn near_miss(t: &str) -> Option<String> {
    let t = t.trim();
    let last = t.rfind(|c: char| c.is_ascii_digit())?;
    let d = t[last..].chars().next()?.to_digit(10)?;
    let new = if d == 9 { 8 } else { d + 1 };
    Some(format!("{}{new}{}", &t[..last], &t[last + 1..]))
}

fn numeric_form(t: &str) -> Option<String> {
    let t = t.trim();
    number(t)?;
    Some(if t.contains('.') {
        format!("{t}0")
    } else {
        format!("{t}.0")
    })
}

/// The answer written by `forgery` for `sample`, the other probed samples given for
/// `other_target` and `every_candidate`; `None` when the table does not build it for this
/// sample's kind, or what it would write is one of the sample's targets.
pub fn forge(
    forgery: Forgery,
    format: Format,
    sample: &Sample,
    probed: &[Sample],
) -> Option<String> {
    let kind = sample.kind();
    let quality = intended(kind, forgery)?;
    let target = sample.targets.first()?.trim().to_string();
    let correct = letter_index(&target);
    let choices = sample.choices.as_deref().unwrap_or_default();
    let wrong_letter = || {
        (0..choices.len())
            .find(|i| {
                Some(*i) != correct && !sample.is_target(&letter(*i).unwrap_or('?').to_string())
            })
            .and_then(letter)
            .map(String::from)
    };
    let content = match forgery {
        Forgery::Target => return Some(format.write(&target)),
        Forgery::TargetAsAnswerLine
        | Forgery::TargetAsBare
        | Forgery::TargetAsSentence
        | Forgery::TargetAsBoxed => {
            let f = Format::ALL.into_iter().find(|f| f.forgery() == forgery)?;
            return (f != format).then(|| f.write(&target));
        }
        Forgery::NumericForm => numeric_form(&target)?,
        Forgery::ChoiceText => choices.get(correct?)?.clone(),
        Forgery::CorrectMentionsOther => {
            let other = wrong_letter()?;
            return Some(format!(
                "{} Option {other} is not right.",
                format.write(&target)
            ));
        }
        Forgery::OtherTarget => {
            let start = probed.iter().position(|s| s.id == sample.id).unwrap_or(0);
            let n = probed.len();
            (1..=n)
                .map(|k| &probed[(start + k) % n.max(1)])
                .filter_map(|s| s.targets.first())
                .find(|t| !sample.is_target(t))?
                .trim()
                .to_string()
        }
        Forgery::OtherOption => wrong_letter()?,
        Forgery::Empty => return Some(String::new()),
        Forgery::Refusal => return Some(REFUSAL.into()),
        Forgery::Garbage => return Some(GARBAGE.into()),
        Forgery::EveryCandidate => {
            let mut candidates: Vec<String> = match kind {
                AnswerKind::MultipleChoice => (0..choices.len())
                    .filter_map(letter)
                    .map(String::from)
                    .collect(),
                AnswerKind::Number => {
                    let mut v = numbers_in(&sample.input);
                    v.push(target.clone());
                    if v.iter().all(|x| sample.is_target(x)) {
                        v.extend(probed.iter().filter_map(|s| s.targets.first().cloned()));
                    }
                    v
                }
                AnswerKind::FreeText => probed
                    .iter()
                    .filter_map(|s| s.targets.first().map(|t| t.trim().to_string()))
                    .chain(std::iter::once(target.clone()))
                    .collect(),
            };
            if kind == AnswerKind::Number {
                candidates.retain(|c| number(c).is_some());
                candidates.sort_by(|a, b| {
                    let (x, y) = (number(a).unwrap_or(0.0), number(b).unwrap_or(0.0));
                    x.total_cmp(&y).then_with(|| a.cmp(b))
                });
                candidates.dedup_by(|a, b| number(a) == number(b));
            } else {
                candidates.sort();
                candidates.dedup();
            }
            if candidates.len() < 2 {
                return None;
            }
            candidates.join(", ")
        }
        Forgery::Prefixed => match kind {
            AnswerKind::Number if !target.starts_with('-') => format!("1{target}"),
            AnswerKind::Number => return None,
            _ => format!("not {target}"),
        },
        Forgery::Negated => {
            let flipped = match target.strip_prefix('-') {
                Some(rest) => rest.to_string(),
                None => format!("-{target}"),
            };
            if number(&target) == Some(0.0) {
                return None;
            }
            flipped
        }
        Forgery::NearMiss => near_miss(&target)?,
        Forgery::WrongMentionsCorrect => {
            let wrong = wrong_letter()?;
            return Some(format!(
                "{} Option {target} is not right.",
                format.write(&wrong)
            ));
        }
    };
    if quality == Quality::Lower && sample.is_target(&content) {
        return None;
    }
    Some(format.write(&content))
}

/// One row of the forgery table as audit.json stores it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    /// Forgery.
    pub forgery: Forgery,
    /// How it is built.
    pub construction: &'static str,
    /// Declared quality per kind (free text, number, multiple choice); none = not built.
    pub quality: [Option<Quality>; 3],
}

/// The forgery table.
pub fn table() -> Vec<TableRow> {
    Forgery::ALL
        .into_iter()
        .map(|f| TableRow {
            forgery: f,
            construction: f.construction(),
            quality: AnswerKind::ALL.map(|k| intended(k, f)),
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn s(id: &str, input: &str, target: &str, choices: Option<&[&str]>) -> Sample {
        Sample {
            id: id.into(),
            input: input.into(),
            targets: vec![target.into()],
            choices: choices.map(|c| c.iter().map(|x| x.to_string()).collect()),
        }
    }

    #[test]
    fn numbers_get_the_issue_s_near_misses_and_superstrings() {
        let a = s(
            "a",
            "Mia has 3 pens and buys 2 more, -4 on 2.5 days, T3 x9",
            "5",
            None,
        );
        let b = s("b", "", "21", None);
        let probed = [a.clone(), b.clone()];
        let f = |forgery| forge(forgery, Format::AnswerLine, &a, &probed);
        assert_eq!(a.kind(), AnswerKind::Number);
        assert_eq!(f(Forgery::Target).as_deref(), Some("ANSWER: 5"));
        assert_eq!(
            f(Forgery::TargetAsAnswerLine),
            None,
            "the chosen format is the anchor"
        );
        assert_eq!(f(Forgery::TargetAsBare).as_deref(), Some("5"));
        assert_eq!(f(Forgery::Prefixed).as_deref(), Some("ANSWER: 15"));
        assert_eq!(f(Forgery::Negated).as_deref(), Some("ANSWER: -5"));
        assert_eq!(f(Forgery::NearMiss).as_deref(), Some("ANSWER: 6"));
        assert_eq!(f(Forgery::NumericForm).as_deref(), Some("ANSWER: 5.0"));
        assert_eq!(f(Forgery::OtherTarget).as_deref(), Some("ANSWER: 21"));
        assert_eq!(
            f(Forgery::EveryCandidate).as_deref(),
            Some("ANSWER: -4, 2, 2.5, 3, 5"),
            "numbers of the input, not of identifiers, ascending, the target among them"
        );
        assert_eq!(f(Forgery::ChoiceText), None);
        let g = |forgery, t: &str| forge(forgery, Format::Bare, &s("c", "", t, None), &[]);
        assert_eq!(g(Forgery::NearMiss, "3.14").as_deref(), Some("3.15"));
        assert_eq!(g(Forgery::NearMiss, "39").as_deref(), Some("38"));
        assert_eq!(g(Forgery::Negated, "-21").as_deref(), Some("21"));
        assert_eq!(g(Forgery::Negated, "0"), None, "-0 is 0");
        assert_eq!(g(Forgery::Prefixed, "-21"), None);
        assert_eq!(
            g(Forgery::EveryCandidate, "7"),
            None,
            "one candidate is no list"
        );
    }

    #[test]
    fn multiple_choice_uses_letters_and_prose() {
        let q = s("q", "Which?", "B", Some(&["red", "green", "blue"]));
        let f = |forgery| forge(forgery, Format::AnswerLine, &q, std::slice::from_ref(&q));
        assert_eq!(q.kind(), AnswerKind::MultipleChoice);
        assert_eq!(f(Forgery::Target).as_deref(), Some("ANSWER: B"));
        assert_eq!(f(Forgery::OtherOption).as_deref(), Some("ANSWER: A"));
        assert_eq!(
            f(Forgery::EveryCandidate).as_deref(),
            Some("ANSWER: A, B, C")
        );
        assert_eq!(f(Forgery::ChoiceText).as_deref(), Some("ANSWER: green"));
        assert_eq!(
            f(Forgery::WrongMentionsCorrect).as_deref(),
            Some("ANSWER: A Option B is not right.")
        );
        assert_eq!(
            f(Forgery::CorrectMentionsOther).as_deref(),
            Some("ANSWER: B Option A is not right.")
        );
        assert_eq!(f(Forgery::OtherTarget), None);
        assert_eq!(f(Forgery::NearMiss), None);
    }

    #[test]
    fn free_text_and_forgeries_equal_to_a_target_are_not_built() {
        let a = Sample {
            id: "a".into(),
            input: "Capital of France?".into(),
            targets: vec!["Paris".into(), "paris, France".into()],
            choices: None,
        };
        let b = s("b", "", " paris ", None);
        let c = s("c", "", "Rome", None);
        let probed = [a.clone(), b, c];
        assert_eq!(a.kind(), AnswerKind::FreeText);
        let f = |forgery| forge(forgery, Format::Sentence, &a, &probed);
        assert_eq!(
            f(Forgery::OtherTarget).as_deref(),
            Some("The answer is Rome."),
            "` paris ` is this sample's target too, so the next one is taken"
        );
        assert_eq!(
            f(Forgery::Prefixed).as_deref(),
            Some("The answer is not Paris.")
        );
        assert_eq!(
            f(Forgery::EveryCandidate).as_deref(),
            Some("The answer is Paris, Rome, paris.")
        );
        assert_eq!(f(Forgery::Negated), None);
    }

    #[test]
    fn the_table_has_one_anchor_per_kind_and_is_complete() {
        for kind in AnswerKind::ALL {
            let anchors = Forgery::ALL
                .iter()
                .filter(|f| intended(kind, **f) == Some(Quality::Anchor))
                .count();
            assert_eq!(anchors, 1, "{kind:?}");
            let lower = Forgery::ALL
                .iter()
                .filter(|f| intended(kind, **f) == Some(Quality::Lower))
                .count();
            assert!(lower >= 5, "{kind:?} has {lower} lower forgeries");
        }
        assert_eq!(table().len(), Forgery::ALL.len());
        for f in Forgery::ALL {
            let name = serde_json::to_value(f).unwrap();
            assert_eq!(name, f.name(), "the serialised name is the table's");
        }
    }
}
