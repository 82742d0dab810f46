//! API keys that cannot leak by accident. Keys come from environment variables only (SPEC §4.2)
//! and must never reach the ledger, a transcript, a log or an error message: [`ApiKey`] has no
//! `Serialize`, and its `Debug` and `Display` print a placeholder, so the only way to the
//! secret is the deliberate [`ApiKey::expose`] at the one place that sets the header.

use std::fmt;

/// What a redacted key prints as.
pub const REDACTED: &str = "<redacted>";

/// A provider API key. Redacts itself everywhere it could be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

/// Why a key could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The variable is unset.
    #[error(
        "environment variable {0} is not set; export the API key there (keys are read from the environment only)"
    )]
    Missing(String),
    /// The variable is set but empty or not Unicode.
    #[error("environment variable {0} is empty or not valid Unicode")]
    Unusable(String),
}

impl ApiKey {
    /// Wraps a key (surrounding whitespace, e.g. a trailing newline from `$(cat key)`, removed).
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into().trim().to_string())
    }

    /// Reads the key from environment variable `var`. Errors name the variable only when it
    /// looks like a variable name: someone who typed the key itself after `--api-key-env` must
    /// not find it echoed in an error message.
    pub fn from_env(var: &str) -> Result<ApiKey, KeyError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(ApiKey::new(v)),
            Ok(_) | Err(std::env::VarError::NotUnicode(_)) => {
                Err(KeyError::Unusable(shown_name(var)))
            }
            Err(std::env::VarError::NotPresent) => Err(KeyError::Missing(shown_name(var))),
        }
    }

    /// The secret itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by [`REDACTED`]: applied to anything
    /// that came back from a provider (error bodies, transport errors) before it is stored.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.0, REDACTED)
        }
    }
}

/// A variable name as it may appear in a message: conventional names (`[A-Z_][A-Z0-9_]*`, at
/// most 64 characters) are shown; anything else might be a pasted key and is not.
pub fn shown_name(var: &str) -> String {
    let conventional = !var.is_empty()
        && var.len() <= 64
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if conventional {
        var.to_string()
    } else {
        "given to --api-key-env (name not shown: it does not look like a variable name and may be a key)".to_string()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Replaces the key in every string of a JSON value (keys of objects included).
pub fn scrub_json(key: Option<&ApiKey>, value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let Some(key) = key.filter(|k| !k.0.is_empty()) else {
        return value;
    };
    match value {
        Value::String(s) if s.contains(&key.0) => Value::String(key.scrub(&s)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| scrub_json(Some(key), v))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (key.scrub(&k), scrub_json(Some(key), v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn debug_and_display_never_show_the_key() {
        let key = ApiKey::new("sk-live-0123456789\n");
        assert_eq!(key.expose(), "sk-live-0123456789");
        for shown in [
            format!("{key:?}"),
            format!("{key}"),
            format!("{:#?}", Some(&key)),
        ] {
            assert!(!shown.contains("sk-live"), "{shown}");
            assert!(shown.contains(REDACTED), "{shown}");
        }
    }

    #[test]
    fn scrubbing_removes_every_occurrence_in_text_and_json() {
        let key = ApiKey::new("sk-abc");
        assert_eq!(
            key.scrub("bad key sk-abc (sk-abc)"),
            "bad key <redacted> (<redacted>)"
        );
        let v = scrub_json(Some(&key), json!({"a": ["x sk-abc"], "sk-abc": 1, "n": 2}));
        assert_eq!(v, json!({"a": ["x <redacted>"], "<redacted>": 1, "n": 2}));
        assert_eq!(scrub_json(None, json!("sk-abc")), json!("sk-abc"));
    }

    #[test]
    fn a_key_pasted_as_the_variable_name_is_not_echoed() {
        for pasted in [
            "sk-proj-abc123",
            "0f3a9c2b7d1e4f6a8b0c2d4e6f8a0b1c",
            "lowercase_var",
        ] {
            let e = ApiKey::from_env(pasted).expect_err("no such variable");
            assert!(!e.to_string().contains(pasted), "{e}");
            assert!(!format!("{e:?}").contains(pasted), "{e:?}");
        }
        assert_eq!(shown_name("OPENAI_API_KEY"), "OPENAI_API_KEY");
    }

    #[test]
    fn missing_and_empty_variables_are_errors_that_name_the_variable_only() {
        // A variable name no test environment sets.
        let e = ApiKey::from_env("BENCHAUDIT_SURELY_UNSET_KEY_VAR_7F3A").expect_err("unset");
        assert_eq!(
            e,
            KeyError::Missing("BENCHAUDIT_SURELY_UNSET_KEY_VAR_7F3A".into())
        );
        assert!(
            e.to_string()
                .contains("BENCHAUDIT_SURELY_UNSET_KEY_VAR_7F3A")
        );
    }
}
