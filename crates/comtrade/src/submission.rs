//! A submission: the three files the released benchmark grades (data.jsonl, metadata.json,
//! run.log), any of which may be missing.

/// The submission directory's contents. `None` is a missing file, which the legacy judge
/// scores differently from an empty one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Submission {
    /// Records as JSON Lines.
    pub data_jsonl: Option<String>,
    /// The agent's self-report.
    pub metadata_json: Option<String>,
    /// The agent's log.
    pub run_log: Option<String>,
    /// Files that were present but not UTF-8; the released scorer raised on them.
    pub undecodable: Vec<&'static str>,
}

impl Submission {
    /// A submission whose three files are all present.
    pub fn new(
        data_jsonl: impl Into<String>,
        metadata_json: impl Into<String>,
        run_log: impl Into<String>,
    ) -> Self {
        Submission {
            data_jsonl: Some(data_jsonl.into()),
            metadata_json: Some(metadata_json.into()),
            run_log: Some(run_log.into()),
            undecodable: Vec::new(),
        }
    }

    /// Builds a submission from raw file bytes. run.log is decoded dropping invalid UTF-8, as the
    /// released scorer did; the other two must be UTF-8 or are recorded as undecodable.
    pub fn from_bytes(
        data: Option<Vec<u8>>,
        metadata: Option<Vec<u8>>,
        log: Option<Vec<u8>>,
    ) -> Self {
        let mut undecodable = Vec::new();
        let mut strict = |name: &'static str, bytes: Option<Vec<u8>>| {
            bytes.map(|b| {
                String::from_utf8(b).unwrap_or_else(|e| {
                    undecodable.push(name);
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                })
            })
        };
        let data_jsonl = strict("data.jsonl", data);
        let metadata_json = strict("metadata.json", metadata);
        let run_log = log.map(|b| b.utf8_chunks().map(|c| c.valid()).collect::<String>());
        Submission {
            data_jsonl,
            metadata_json,
            run_log,
            undecodable,
        }
    }

    /// The non-empty (after trimming) lines of data.jsonl: what both scorers count as records.
    pub fn data_lines(&self) -> impl Iterator<Item = &str> {
        self.data_jsonl
            .as_deref()
            .unwrap_or("")
            .split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_drops_invalid_bytes_and_data_records_them() {
        let s = Submission::from_bytes(
            Some(vec![b'{', 0xff, b'}']),
            None,
            Some(vec![b'o', 0xfe, b'k']),
        );
        assert_eq!(s.run_log.as_deref(), Some("ok"));
        assert_eq!(s.undecodable, vec!["data.jsonl"]);
        assert_eq!(s.metadata_json, None);
    }

    #[test]
    fn data_lines_skip_blank_lines() {
        let s = Submission::new("a\n\n  \n b \r\n", "{}", "");
        assert_eq!(s.data_lines().collect::<Vec<_>>(), vec!["a", "b"]);
    }
}
