//! Hints reworded for a model calling tools: a command line the CLI's hint quotes
//! (`` `agent-workspace clean --force w1` ``) becomes the tool call that does the same
//! (`` `workspace_clean` with `id: "w1", force: true` ``). A command no tool does (`pool fill`,
//! `status --size`, a bulk `clean`) is left as it is: the user's to run.

/// Rewords every `hint` of a document, at any depth (a failure's, a status row's, a clean's
/// failed entries'), and every `reason` (a clean's skipped entries: "pass --force ...").
pub(super) fn in_document(doc: &mut serde_json::Value) {
    use serde_json::Value;
    match doc {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "hint" || key == "reason" => {
                        *text = for_tools(text)
                    }
                    _ => in_document(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(in_document),
        _ => {}
    }
}

/// `hint` with every command line a tool can do named as that tool and its arguments.
pub(super) fn for_tools(hint: &str) -> String {
    let mut out = String::with_capacity(hint.len());
    let mut rest = hint;
    while let Some(start) = rest.find("`agent-workspace ") {
        let Some(len) = rest[start + 1..].find('`') else {
            break;
        };
        let quoted = &rest[start + 1..start + 1 + len];
        out.push_str(&rest[..start]);
        match call(quoted) {
            Some(call) => out.push_str(&call),
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    // The flags of a tool's own call, named bare ("pass --force to stop it first").
    out.replace("pass --force", "pass `force: true`")
        .replace("pass --onto REV", "pass `onto`")
}

/// The tool call doing what command line `line` does, if one does.
fn call(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().skip(1);
    let command = words.next()?;
    let tool = match command {
        "create" => "workspace_create",
        "run" => "workspace_run",
        "status" => "workspace_status",
        "diff" => "workspace_diff",
        "checkpoint" => "workspace_checkpoint",
        "land" => "workspace_land",
        "clean" => "workspace_clean",
        _ => return None,
    };
    let mut args: Vec<String> = vec![];
    let mut id = None;
    while let Some(word) = words.next() {
        match (command, word) {
            ("run", "--") => {
                let argv: Vec<&str> = words.by_ref().collect();
                let argv = match argv.as_slice() {
                    ["..."] => "[...]".to_string(),
                    argv => serde_json::to_string(argv).ok()?,
                };
                args.push(format!("command: {argv}"));
            }
            ("clean", "--force") => args.push("force: true".into()),
            ("diff", "--patch") => args.push("patch: true".into()),
            (_, "--dry-run") if matches!(command, "clean" | "land") => {
                args.push("dry_run: true".into())
            }
            ("land", "--prefer") => {
                let side = words.next()?;
                let sides: Vec<String> = side.split('|').map(|s| format!("{s:?}")).collect();
                args.push(format!("prefer: {}", sides.join(" or ")));
            }
            ("land", "--onto") => args.push(format!("onto: {:?}", words.next()?)),
            (_, "-m") if command == "checkpoint" => {
                let message: Vec<&str> = words.by_ref().collect();
                args.push(format!("message: {:?}", message.join(" ")));
            }
            (_, flag) if flag.starts_with('-') => return None,
            (_, word) if id.is_none() => id = Some(word),
            _ => return None,
        }
    }
    if let Some(id) = id {
        args.insert(0, format!("id: {id:?}"));
    }
    Some(match args.is_empty() {
        true => format!("`{tool}`"),
        false => format!("`{tool}` with `{}`", args.join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::for_tools;

    #[test]
    fn command_lines_become_tool_calls() {
        let cases = [
            (
                "inspect /x, then `agent-workspace clean --force w1` removes it, keeping its files aside",
                "inspect /x, then `workspace_clean` with `id: \"w1\", force: true` removes it, keeping its files aside",
            ),
            (
                "`agent-workspace run w1 -- true` adopts or repairs it; `agent-workspace status w1` shows its problem",
                "`workspace_run` with `id: \"w1\", command: [\"true\"]` adopts or repairs it; `workspace_status` with `id: \"w1\"` shows its problem",
            ),
            (
                "its run died; `agent-workspace run w -- ...` resumes it",
                "its run died; `workspace_run` with `id: \"w\", command: [...]` resumes it",
            ),
            (
                "list workspaces with `agent-workspace status`; create one with `agent-workspace run`",
                "list workspaces with `workspace_status`; create one with `workspace_run`",
            ),
            (
                "resolve with `agent-workspace land w --prefer workspace|target`",
                "resolve with `workspace_land` with `id: \"w\", prefer: \"workspace\" or \"target\"`",
            ),
            (
                "a run is live (pid 4, since now); pass --force to stop it first",
                "a run is live (pid 4, since now); pass `force: true` to stop it first",
            ),
        ];
        for (cli, tools) in cases {
            assert_eq!(for_tools(cli), tools);
        }
    }

    /// What no tool does stays the user's command line.
    #[test]
    fn commands_no_tool_does_are_left_as_they_are() {
        for hint in [
            "`agent-workspace pool fill` goes on where it stopped",
            "free space (`agent-workspace status --size` shows what each takes)",
            "`agent-workspace clean --status done` removes finished ones",
            "start the server with `agent-workspace mcp --allow-land`",
            "no command at all",
            "an unclosed `agent-workspace status",
        ] {
            assert_eq!(for_tools(hint), hint);
        }
    }
}
