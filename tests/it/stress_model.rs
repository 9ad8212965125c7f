//! A model-based stress round (issue 19): agents in workspaces and a user in the main working
//! copy perform random operations drawn from a seeded generator, some of them SIGKILLed at a
//! random moment; after every step an oracle checks that every line anyone wrote is still
//! somewhere (and where it must be), that no conflict marker appeared that no command
//! reported, and that `status` agrees with the model. See docs/stress.md.
//!
//! `STRESS_SEED=N` (one seed) or `STRESS_SEEDS=1,2,3` and `STRESS_STEPS=N` select the round
//! (default: seeds 1 and 2, 40 steps, per backend); a failure prints the seed, the step, what
//! broke and the step log, and the command that replays it. `STRESS_KEEP_GOING=1` goes on
//! after a break and lists the first step of each kind of break.

mod agent;
mod land;
mod observe;
mod oracle;
mod proc;
mod removal;
mod rng;
mod steps;
mod user;
mod world;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use crate::backends::Backend;
use crate::harness::TestEnv;

use oracle::{Expect, MAIN};
use world::World;

/// The seeds and the number of steps of a round, from the environment.
fn plan() -> (Vec<u64>, u64) {
    let number = |key: &str| {
        std::env::var(key)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| {
                v.split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<u64>()
                            .unwrap_or_else(|e| panic!("{key}={v}: not a number: {e}"))
                    })
                    .collect::<Vec<_>>()
            })
    };
    let seeds = number("STRESS_SEED")
        .or_else(|| number("STRESS_SEEDS"))
        .unwrap_or_else(|| vec![1, 2]);
    let steps = number("STRESS_STEPS")
        .and_then(|v| v.first().copied())
        .unwrap_or(40);
    (seeds, steps)
}

/// One seed's round; the failure report, if an invariant broke. With `STRESS_KEEP_GOING=1`
/// the round goes on after a break and reports the first step of each kind of break.
fn round(backend: Backend, seed: u64, steps: u64) -> Option<String> {
    let keep_going = std::env::var("STRESS_KEEP_GOING").is_ok_and(|v| v == "1");
    let env = TestEnv::new();
    let mut world = World::new(&env, backend, seed);
    if !world.allow_conflicts {
        world
            .log
            .push("(this binary's land has no --allow-conflicts: lands go without it)".into());
    }
    let mut kinds: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut broken_steps = 0;
    // Breaks seen at the step before: a break that lasts is reported at the step that made it.
    let mut before: BTreeSet<String> = BTreeSet::new();
    // `STRESS_SECONDS`: stop after the step that runs out of this time (the figures are of
    // the steps done); `STRESS_PROGRESS=<n>`: a line of figures every n steps.
    let budget = std::env::var("STRESS_SECONDS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(std::time::Duration::from_secs);
    let progress = std::env::var("STRESS_PROGRESS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| *n > 0);
    let started = std::time::Instant::now();
    let mut done = 0;
    for step in 0..=steps {
        if step > 0 && budget.is_some_and(|b| started.elapsed() >= b) {
            break;
        }
        done = step;
        if progress.is_some_and(|n| step > 0 && step % n == 0) {
            eprintln!(
                "stress_model {} seed {seed}: step {step}, {} s, {} lines tracked, {} commits named, {broken_steps} steps broke an invariant",
                backend.name(),
                started.elapsed().as_secs(),
                world.model.tokens.len(),
                world.model.named.len(),
            );
            if proc::profile::on() {
                eprint!("{}", proc::profile::take());
            }
            // The step log so far, to look into while a long round runs.
            write_log(&world);
        }
        let clock = std::time::Instant::now();
        let killed = if step == 0 {
            false
        } else {
            world.log.push(format!("step {step}:"));
            world.step()
        };
        proc::profile::add("(round) steps", clock.elapsed());
        let clock = std::time::Instant::now();
        let broken = world.check(killed);
        proc::profile::add("(round) oracle checks", clock.elapsed());
        if broken.is_empty() {
            before.clear();
            continue;
        }
        if !keep_going {
            save(&env, &world, None);
            return Some(report(&world, step, &broken, steps));
        }
        broken_steps += 1;
        let action = action(&world.log, step);
        let now: BTreeSet<String> = broken.iter().cloned().collect();
        let new_kind = broken
            .iter()
            .filter(|b| !before.contains(*b))
            .any(|b| !kinds.contains_key(&format!("{} after {}", kind(b), blur(&action))));
        if new_kind && kinds.len() < SAVED_KINDS {
            save(&env, &world, Some(step));
        }
        for b in broken.iter().filter(|b| !before.contains(*b)) {
            // Printed as it happens too: a long round's log is written only at its end.
            eprintln!(
                "stress_model {} seed {seed}: step {step} broke: {b}\n      (after: {action})",
                backend.name()
            );
            world.log.push(format!("  BROKEN: {b}"));
            kinds
                .entry(format!("{} after {}", kind(b), blur(&action)))
                .or_insert_with(|| (step, format!("{b}\n      (after: {action})")));
        }
        before = now;
    }
    let summary = format!(
        "stress_model {} seed {seed}: {done} steps in {} s, {} lines tracked ({} live), {} steps broke an invariant, {:?}",
        backend.name(),
        started.elapsed().as_secs(),
        world.model.tokens.len(),
        world.model.live_tokens().len(),
        broken_steps,
        world.stats
    );
    eprintln!("{summary}");
    let log_file = write_log(&world);
    if kinds.is_empty() {
        return None;
    }
    let first: Vec<String> = kinds
        .values()
        .map(|(step, b)| format!("step {step}: {b}"))
        .collect();
    Some(format!(
        "=== {summary}\nfirst step of each kind of break (whole log: {}):\n{}\n",
        log_file.display(),
        first.join("\n")
    ))
}

/// A break with its numbers and workspace ids blurred, so breaks of one kind count once.
fn kind(broken: &str) -> String {
    blur(broken)
        .split(':')
        .take(2)
        .collect::<Vec<_>>()
        .join(":")
}

fn blur(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

/// What step `step` did, from the log: its lines before the first command.
fn action(log: &[String], step: u64) -> String {
    let header = format!("step {step}:");
    let start = log.iter().rposition(|l| *l == header).map_or(0, |i| i + 1);
    log[start..]
        .iter()
        .take_while(|l| !l.starts_with("    "))
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many kinds of break a round going on after a break saves the directory of.
const SAVED_KINDS: usize = 4;

/// With `STRESS_SAVE=1`, a copy of the round's whole directory (repository, workspaces,
/// configuration) at the break, to look into: `$TMPDIR/stress-model-<backend>-<seed>-env`;
/// going on after breaks, at the first step of each of the first [`SAVED_KINDS`] kinds of
/// break: `...-env-<step>`.
fn save(env: &TestEnv, world: &World, step: Option<u64>) {
    if std::env::var("STRESS_SAVE").is_ok_and(|v| v == "1") {
        let suffix = step.map(|s| format!("-{s}")).unwrap_or_default();
        let dest = std::env::temp_dir().join(format!(
            "stress-model-{}-{}-env{suffix}",
            world.backend.name(),
            world.seed
        ));
        let _ = fs::remove_dir_all(&dest);
        let out = std::process::Command::new("cp")
            .arg("-a")
            .arg(env.path())
            .arg(&dest)
            .status();
        eprintln!(
            "saved the round's directory to {} ({out:?})",
            dest.display()
        );
    }
}

fn write_log(world: &World) -> std::path::PathBuf {
    let name = world.backend.name();
    let log_file = std::env::temp_dir().join(format!("stress-model-{name}-{}.log", world.seed));
    let _ = fs::write(&log_file, world.log.join("\n"));
    log_file
}

fn report(world: &World, step: u64, broken: &[String], steps: u64) -> String {
    let name = world.backend.name();
    let log_file = write_log(world);
    let tail: Vec<&String> = world.log.iter().rev().take(40).collect();
    let tail: Vec<&str> = tail.into_iter().rev().map(String::as_str).collect();
    format!(
        "=== {name} seed {} broke at step {step} of {steps} ({} lines tracked, {:?})\n{}\n\
         --- the last steps (whole log: {}):\n{}\n\
         --- replay: STRESS_SEED={} STRESS_STEPS={step} cargo test --test it stress_model_{name}\n",
        world.seed,
        world.model.tokens.len(),
        world.stats,
        broken.join("\n"),
        log_file.display(),
        tail.join("\n"),
        world.seed,
    )
}

fn stress(backend: Backend) {
    let (seeds, steps) = plan();
    let failures: Vec<String> = seeds
        .iter()
        .filter_map(|seed| round(backend, *seed, steps))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} seeds broke an invariant:\n{}",
        failures.len(),
        seeds.len(),
        failures.join("\n")
    );
}

#[test]
fn stress_model_jj() {
    stress(Backend::Jj);
}

#[test]
fn stress_model_git() {
    stress(Backend::Git);
}

/// The oracle is not blind: a line taken from the main working copy behind the model's back,
/// a line the model believes written but nobody wrote, an unreported conflict marker and a
/// status the model does not expect are each reported.
#[test]
fn stress_model_oracle_sees_a_lost_line_a_marker_and_a_wrong_status() {
    let env = TestEnv::new();
    let mut world = World::new(&env, Backend::Git, 7);
    world.agent_run_to_end();
    world.agent_run_to_end();
    let baseline = world.check(false);
    assert!(baseline.is_empty(), "{}", baseline.join("\n"));

    // A required line removed from the main working copy: MISSING.
    let n = *world
        .model
        .main_required
        .iter()
        .next()
        .expect("a main line");
    let token = format!("L7_{n}_");
    let mut hit = false;
    for (file, tokens) in world.scan(MAIN).files {
        if tokens.contains(&n) {
            let path = world.dir(MAIN).join(&file);
            let text = fs::read_to_string(&path).unwrap();
            let rest: String = text
                .lines()
                .filter(|l| !l.contains(&token))
                .map(|l| format!("{l}\n"))
                .collect();
            fs::write(&path, rest).unwrap();
            hit = true;
        }
    }
    assert!(hit, "line {token} is not in the main working copy");
    let broken = world.check(false);
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("MISSING") && b.contains(&token) && b.contains("main's")),
        "{broken:?}"
    );

    // A line the model believes written that is nowhere: LOST.
    let ghost = world.model.token(MAIN);
    world.model.written(MAIN, ghost);
    let broken = world.check(false);
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("LOST") && b.contains(&format!("L7_{ghost}_"))),
        "{broken:?}"
    );

    // An unreported conflict marker in a workspace: MARKERS.
    let id = world.model.live_ws()[0].clone();
    fs::write(
        world.dir(&id).join("marked.txt"),
        "<<<<<<< side\nx\n>>>>>>> end\n",
    )
    .unwrap();
    let broken = world.check(false);
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("MARKERS") && b.contains(&format!("{id}/marked.txt"))),
        "{broken:?}"
    );

    // A status the model does not expect: STATUS.
    world.model.ws.get_mut(&id).unwrap().expect = Expect::Is("conflicted");
    let broken = world.check(false);
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with(&format!("STATUS: {id} shows"))),
        "{broken:?}"
    );
}

/// The history the oracle counts holds a commit no ref or worktree holds once the tool named
/// it (asked of git all at once), and a named id the store does not have is no error.
#[test]
fn stress_model_history_holds_the_commits_the_tool_named() {
    let env = TestEnv::new();
    let mut world = World::new(&env, Backend::Git, 9);
    let n = world.model.token(MAIN);
    world.append(MAIN, "s0.txt", n);
    // A commit of the edit that no ref holds, then the edit undone on disk.
    let stash = proc::run(&env, &world.repo, "git", &proc::argv(&["stash", "create"]));
    let dangling = stash.stdout.trim().to_string();
    assert!(stash.ok() && !dangling.is_empty(), "{}", stash.stderr);
    let out = proc::run(
        &env,
        &world.repo,
        "git",
        &proc::argv(&["checkout", "--", "."]),
    );
    assert!(out.ok(), "{}", out.stderr);

    let mut named = BTreeSet::new();
    let seen = world
        .history
        .tokens(&env, &world.repo, Backend::Git, &named, world.seed);
    assert!(!seen.contains(&n), "no ref holds line {n}: {seen:?}");
    named.insert("0123456789abcdef0123456789abcdef01234567".to_string());
    named.insert(dangling);
    let seen = world
        .history
        .tokens(&env, &world.repo, Backend::Git, &named, world.seed);
    assert!(
        seen.contains(&n),
        "the named commit holds line {n}: {seen:?}"
    );
}
