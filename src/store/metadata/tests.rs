//! The record's parsing, history bound and timestamps.
use super::*;
use crate::store::timestamp::Timestamp;

fn sample() -> Record {
    let text = r#"{"schema_version":1,"workspace_id":"w","workflow":null,"status":"done",
        "command":["true"],"repo_root":"/r","workspace_path":"/w","backend":"jj",
        "base_change":null,"created_at":"2026-01-01T00:00:00Z",
        "updated_at":"2026-01-01T00:00:00Z","future_field":{"kept":true}}"#;
    match parse(text.as_bytes()) {
        Loaded::Ok(record) => *record,
        other => panic!("sample did not parse: {other:?}"),
    }
}

#[test]
fn unknown_fields_survive_a_round_trip() {
    let record = sample();
    let text = serde_json::to_string(&record).unwrap();
    assert!(text.contains(r#""future_field":{"kept":true}"#), "{text}");
    assert_eq!(record.status, Status::Done);
}

#[test]
fn corrupt_and_newer_are_told_apart() {
    assert!(matches!(
        parse(b"{\"schema_version\":1,"),
        Loaded::Corrupt(_)
    ));
    assert!(matches!(parse(b"[]"), Loaded::Corrupt(_)));
    assert!(matches!(
        parse(b"{\"schema_version\":1}"),
        Loaded::Corrupt(_)
    ));
    assert!(matches!(
        parse(b"{\"schema_version\":7,\"x\":1}"),
        Loaded::Newer(7, _)
    ));
}

#[test]
fn history_is_bounded() {
    let mut record = sample();
    for i in 0..(MAX_RUNS + 5) {
        record.push_run(Run {
            started_at: Timestamp::parse(&format!("{i}")),
            finished_at: None,
            duration_ms: None,
            status: Status::Done,
            exit_code: Some(0),
            signal: None,
            limit_hit: None,
            command: vec![],
            workflow: None,
            pid: None,
            sandbox: None,
            checkpoint: None,
        });
    }
    assert_eq!(record.runs.len(), MAX_RUNS);
    assert_eq!(record.runs[0].started_at.to_string(), "5");
}

#[test]
fn timestamps_round_trip() {
    let stamp = now().to_string();
    assert!(stamp.ends_with('Z'), "{stamp}");
    assert!(Timestamp::parse(&stamp).time().is_some());
}

/// A record's times are data an agent can write: text that is no time still reads (as
/// before, when they were strings), is written back unchanged, and has no moment, so no age.
#[test]
fn a_record_with_times_that_are_no_times_reads_and_writes_them_unchanged() {
    let text = r#"{"schema_version":1,"workspace_id":"w","workflow":null,"status":"done",
        "command":["true"],"repo_root":"/r","workspace_path":"/w","backend":"jj",
        "base_change":null,"created_at":"yesterday","updated_at":"2026-01-01T00:00:00.25Z",
        "started_at":"","finished_at":"2026-01-01T00:00:00Z",
        "runs":[{"started_at":"soon","finished_at":null,"duration_ms":null,"status":"done",
            "exit_code":0,"signal":null,"command":["true"],"workflow":null,"pid":null}]}"#;
    let Loaded::Ok(record) = parse(text.as_bytes()) else {
        panic!("a record with odd times did not read");
    };
    assert_eq!(record.created_at.time(), None);
    assert!(record.updated_at.time().is_some());
    let now = std::time::SystemTime::now();
    assert_eq!(record.runs[0].started_at.age(now), None);
    assert_eq!(record.shown_status(), "done");
    let written = serde_json::to_string(&record).unwrap();
    for kept in [
        r#""created_at":"yesterday""#,
        r#""updated_at":"2026-01-01T00:00:00.25Z""#,
        r#""started_at":"""#,
        r#""started_at":"soon""#,
        r#""finished_at":"2026-01-01T00:00:00Z""#,
    ] {
        assert!(written.contains(kept), "{kept} in {written}");
    }
}

#[test]
fn an_undone_land_shows_the_run_s_status_and_the_journal_round_trips() {
    let mut record = sample();
    record.land = Some(Land {
        at: Timestamp::parse("2026-01-01T00:00:01Z"),
        target: "default@".into(),
        commits: vec!["ab".into()],
        changes: vec![],
        outcome: LandOutcome::Conflicted,
        resolved: vec![],
        conflicts: vec![],
        operation_before: None,
        after_run_started_at: None,
        after_run_pid: None,
        merge_commit: None,
        recovered: false,
        unapplied: false,
    });
    assert_eq!(record.shown_status(), "conflicted");
    record.land_check = LandCheck::Verified;
    assert_eq!(record.shown_status(), "conflicted");
    record.land_check = LandCheck::Undone;
    assert_eq!(record.shown_status(), "done");
    record.land_intent = Some(LandIntent {
        at: Timestamp::parse("2026-01-01T00:00:02Z"),
        target: "main".into(),
        operation_before: None,
        target_before: Some("cd".into()),
        after_run_started_at: None,
        after_run_pid: None,
    });
    let text = serde_json::to_string(&record).unwrap();
    assert!(!text.contains("land_check"), "{text}");
    assert!(!text.contains("recovered"), "{text}");
    match parse(text.as_bytes()) {
        Loaded::Ok(back) => {
            assert_eq!(back.land_intent, record.land_intent);
            assert_eq!(back.land_check, LandCheck::Unchecked);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn records_written_before_the_one_vocabulary_read_as_before_and_write_the_new_names() {
    let text = r#"{"schema_version":1,"workspace_id":"w","workflow":null,"status":"done",
        "command":["true"],"repo_root":"/r","workspace_path":"/w","backend":"jj",
        "base_change":null,"created_at":"2026-01-01T00:00:00Z",
        "updated_at":"2026-01-01T00:00:00Z",
        "runs":[{"started_at":"2026-01-01T00:00:00Z","status":"done","command":["true"],
            "checkpoint":{"commit":"c0ffee","change_id":"kk"}}],
        "land":{"at":"2026-01-01T00:00:00Z","target":"default@","commits":["c0ffee"],
            "outcome":"conflicted","conflicts":[{"commit":"c0ffee","file":"a.txt"}],
            "resolved":[{"file":"b.txt","side":"workspace"}]}}"#;
    let Loaded::Ok(record) = parse(text.as_bytes()) else {
        panic!("an old record did not parse");
    };
    let land = record.land.as_ref().unwrap();
    assert_eq!(land.conflicts[0].commit, "c0ffee");
    assert_eq!(land.conflicts[0].file, "a.txt");
    assert_eq!(land.resolved[0].file, "b.txt");
    let checkpoint = record.runs[0].checkpoint.as_ref().unwrap();
    assert_eq!(checkpoint.commit, "c0ffee");
    let written = serde_json::to_value(&record).unwrap();
    assert_eq!(
        written["land"]["conflicts"][0],
        serde_json::json!({"commit_id": "c0ffee", "path": "a.txt"})
    );
    assert_eq!(written["land"]["resolved"][0]["path"], "b.txt");
    assert_eq!(written["runs"][0]["checkpoint"]["commit_id"], "c0ffee");
}

#[test]
fn a_land_target_is_read_and_written_as_the_text_records_keep() {
    for (text, target) in [
        ("default@", LandTarget::WorkingCopy("default".into())),
        ("parent-1@", LandTarget::WorkingCopy("parent-1".into())),
        ("c0ffee,d00d", LandTarget::Revision("c0ffee,d00d".into())),
        ("main", LandTarget::Revision("main".into())),
    ] {
        let read: LandTarget = serde_json::from_value(serde_json::json!(text)).unwrap();
        assert_eq!(read, target);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::json!(text)
        );
        assert_eq!(read.to_string(), text);
    }
    assert_eq!(LandTarget::from("x@").working_copy(), Some("x"));
    assert_eq!(LandTarget::from("main").working_copy(), None);
}

#[test]
fn a_record_names_workspaces_by_checked_ids_only() {
    let record = |id: &str, parent: &str| {
        format!(
            r#"{{"schema_version":1,"workspace_id":{id},"workflow":null,"status":"done",
            "command":["true"],"repo_root":"/r","workspace_path":"/w","backend":"jj",
            "base_change":null,"created_at":"2026-01-01T00:00:00Z",
            "updated_at":"2026-01-01T00:00:00Z","parent":{parent}}}"#
        )
    };
    let Loaded::Ok(ok) = parse(record(r#""w1""#, r#""p-1""#).as_bytes()) else {
        panic!("a record of valid ids did not parse");
    };
    assert_eq!(ok.workspace_id, "w1".to_string());
    assert!(matches!(&ok.parent, Some(Parent::Id(id)) if id == "p-1"));
    // A prepared workspace's name is read as such.
    let Loaded::Ok(prepared) = parse(record(r#"".pool-abc1""#, "null").as_bytes()) else {
        panic!("a prepared workspace's record did not parse");
    };
    assert_eq!(prepared.workspace_id.as_str(), ".pool-abc1");
    // A parent that is no id is kept as written, for the command that uses it to refuse.
    let Loaded::Ok(kept) = parse(record(r#""w1""#, r#""../x""#).as_bytes()) else {
        panic!("a bad parent made the record unreadable");
    };
    assert!(matches!(&kept.parent, Some(Parent::Unreadable(bad)) if bad.id == "../x"));
    // A record whose own id is no id is not taken for one.
    for bad in [r#""../x""#, r#""""#, r#""a b""#] {
        assert!(
            matches!(parse(record(bad, "null").as_bytes()), Loaded::Corrupt(_)),
            "{bad}"
        );
    }
}

#[test]
fn a_parent_is_written_back_as_it_was_read() {
    // (what the record holds, whether it is an id): an id, what is no id (a path, a prepared
    // workspace's name, nothing), and no parent at all.
    let cases: [(Option<&str>, bool); 5] = [
        (Some("p-1"), true),
        (Some("../x"), false),
        (Some(".pool-abc1"), false),
        (Some(""), false),
        (None, false),
    ];
    for (written, valid) in cases {
        let mut value = serde_json::to_value(sample()).unwrap();
        let object = value.as_object_mut().unwrap();
        if let Some(name) = written {
            object.insert("parent".into(), serde_json::json!(name));
        }
        let record: Record = serde_json::from_value(value).unwrap();
        assert_eq!(
            record.parent.as_ref().map(Parent::as_written),
            written,
            "{written:?}"
        );
        assert_eq!(
            record.parent.as_ref().is_some_and(|p| p.id().is_ok()),
            valid,
            "{written:?}"
        );
        if let Some(Parent::Unreadable(invalid)) = &record.parent {
            // The error a command refusing it gives is the one a command-line id would.
            let refused = WorkspaceId::parse(written.unwrap()).unwrap_err();
            assert_eq!(invalid.to_string(), refused.to_string());
        }
        let text = serde_json::to_value(&record).unwrap();
        assert_eq!(
            text.get("parent"),
            written.map(|name| serde_json::json!(name)).as_ref(),
            "{written:?}"
        );
    }
    // An explicit null is no parent, and is then left out.
    let mut value = serde_json::to_value(sample()).unwrap();
    value["parent"] = serde_json::Value::Null;
    let record: Record = serde_json::from_value(value).unwrap();
    assert!(record.parent.is_none());
    assert!(serde_json::to_value(&record)
        .unwrap()
        .get("parent")
        .is_none());
    // A typed parent is written as its id.
    let mut record = sample();
    record.parent = Some(Parent::from(WorkspaceId::parse("p-2").unwrap()));
    assert_eq!(
        serde_json::to_value(&record).unwrap()["parent"],
        serde_json::json!("p-2")
    );
}
