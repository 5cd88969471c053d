//! `status --json`: the view for scripts, in the versioned shape `docs/status.schema.json`
//! describes. `schema_version` changes only when a field is removed, renamed or changes meaning;
//! adding a field keeps the version (docs/view.md). Health is the kebab-case word
//! (`writers-alive`); each Run's `attention` and `next_step` are derived from its row here, as
//! the other renderers derive them. Nothing here reads the clock: `generated_at` is given.

use chrono::{DateTime, Utc};

use super::model::View;

/// The version of the JSON shape `render` writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The view as pretty-printed JSON with `schema_version` and `generated_at`.
pub fn render(view: &View, now: DateTime<Utc>) -> String {
    let mut value = serde_json::to_value(view).unwrap_or_default();
    // Each Run's group and next step, derived from the row as every renderer derives them
    let rows = value.get_mut("runs").and_then(|r| r.as_array_mut());
    for (row, r) in rows.into_iter().flatten().zip(&view.runs) {
        if let Some(row) = row.as_object_mut() {
            let attention = serde_json::to_value(r.health.attention());
            let step = serde_json::to_value(super::next_step::of(r));
            row.insert("attention".into(), attention.unwrap_or_default());
            row.insert("next_step".into(), step.unwrap_or_default());
        }
    }
    if let Some(object) = value.as_object_mut() {
        object.insert("schema_version".into(), SCHEMA_VERSION.into());
        object.insert(
            "generated_at".into(),
            serde_json::to_value(now).unwrap_or_default(),
        );
    }
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture;

    #[test]
    fn json_names_its_schema_version_and_every_run_with_its_health() {
        let view = fixture::view(&[]);
        let v: serde_json::Value = serde_json::from_str(&render(&view, fixture::now())).unwrap();
        assert_eq!(v["schema_version"], 1);
        assert_eq!(v["generated_at"], "2025-03-05T12:00:00Z");
        let healths: Vec<&str> = v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["health"].as_str().unwrap())
            .collect();
        // each Run with a known Harness says how to resume its session from its worktree
        let alive = v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["health"] == "alive")
            .unwrap();
        assert_eq!(
            alive["resume"],
            "cd /work/wt-issue-42 && claude --resume sess-12"
        );
        // the Runs that need a person first, then those being recovered, then the running,
        // each group in issue order, each row saying which
        assert_eq!(
            healths,
            [
                "writers-alive",
                "awaiting-host",
                "unowned",
                "host-silent",
                "colliding",
                "superseded",
                "dead",
                "alive",
                "alive",
            ]
        );
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs[0]["attention"], "needs-you");
        assert_eq!(
            runs[0]["next_step"]["command"],
            "/thirdshift recover --kill"
        );
        // the later of two machines' Commands on issue 50 names the one that keeps the issue
        assert_eq!(runs[4]["issue"], 50);
        assert_eq!(runs[4]["host"], "build-01");
        assert_eq!(runs[4]["collides_with"]["host"], "build-02");
        assert_eq!(runs[4]["collides_with"]["claim_id"], "ts-first");
        assert!(runs[4]["next_step"]["says"]
            .as_str()
            .unwrap()
            .contains("`ts-first` on `build-02`"));
        assert_eq!(runs[5]["attention"], "being-recovered");
        assert_eq!(runs[7]["attention"], "running");
        assert_eq!(runs[7]["next_step"], serde_json::Value::Null);
    }
}
