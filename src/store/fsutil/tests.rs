//! Symlink-safe opens, atomic writes and removals.
use super::*;
use std::os::unix::fs::symlink;

#[test]
fn symlinks_are_refused_and_not_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let link = tmp.path().join("link");
    symlink(&outside, &link).unwrap();
    assert!(matches!(
        create_dir_nofollow(&link),
        Err(FsError::Symlink { .. })
    ));
    assert!(matches!(
        open_nofollow(&link.join("f")),
        Err(FsError::Symlink { .. })
    ));
    assert!(matches!(
        write_atomic(&link.join("f"), b"x"),
        Err(FsError::Symlink { .. })
    ));
    assert!(matches!(
        remove_dir_checked(tmp.path(), "link"),
        Err(FsError::Symlink { .. })
    ));
    let file_link = tmp.path().join("file-link");
    symlink(outside.join("target"), &file_link).unwrap();
    assert!(matches!(
        open_nofollow(&file_link),
        Err(FsError::Symlink { .. })
    ));
    // An atomic write replaces the symlink itself.
    write_atomic(&file_link, b"x").unwrap();
    assert!(!fs::symlink_metadata(&file_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn a_symlink_anywhere_in_an_absolute_path_is_refused_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let outside = base.join("outside");
    fs::create_dir_all(outside.join("deeper")).unwrap();
    symlink(&outside, base.join("link")).unwrap();
    let through = base.join("link/deeper/f");
    match open_nofollow(&through) {
        Err(FsError::Symlink { path }) => assert_eq!(path, base.join("link")),
        other => panic!("{other:?}"),
    }
    match write_atomic(&through, b"x") {
        Err(FsError::Symlink { path }) => assert_eq!(path, base.join("link")),
        other => panic!("{other:?}"),
    }
    assert_eq!(fs::read_dir(outside.join("deeper")).unwrap().count(), 0);
}

#[test]
fn real_directories_work() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    create_dir_nofollow(&dir).unwrap();
    create_dir_nofollow(&dir).unwrap();
    write_atomic(&dir.join("f"), b"1").unwrap();
    write_atomic(&dir.join("f"), b"2").unwrap();
    assert_eq!(fs::read(dir.join("f")).unwrap(), b"2");
    open_nofollow(&dir.join("l")).unwrap();
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
    remove_dir_checked(tmp.path(), "d").unwrap();
    assert!(!dir.exists());
}

#[test]
fn a_long_name_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "x".repeat(300);
    match create_dir_nofollow(&tmp.path().join(&long)) {
        Err(FsError::NameTooLong { component, .. }) => assert_eq!(component, long),
        other => panic!("{other:?}"),
    }
}

#[test]
fn replace_swaps_in_the_new_file_and_leaves_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("record.json");
    fs::write(&path, "old").unwrap();
    write_atomic(&path, b"new").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(names(dir.path()), ["record.json"], "only the file itself");
}

#[test]
fn replace_refuses_a_directory_and_moves_nothing_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("record.json");
    fs::create_dir(&path).unwrap();
    fs::write(path.join("kept"), "an agent's file").unwrap();
    assert!(write_atomic(&path, b"new").is_err());
    assert_eq!(
        fs::read_to_string(path.join("kept")).unwrap(),
        "an agent's file"
    );
    assert_eq!(
        names(dir.path()),
        ["record.json"],
        "no temp file or moved directory"
    );
}

#[test]
fn replace_replaces_a_symlink_without_writing_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    fs::write(&outside, "theirs").unwrap();
    let path = dir.path().join("record.json");
    symlink(&outside, &path).unwrap();
    write_atomic(&path, b"new").unwrap();
    assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs");
    assert!(!fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&path).unwrap(), "new");
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn untrusted_reads_refuse_fifos_symlinks_and_big_files_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let fifo_mode = rustix::fs::Mode::from_bits_retain(0o600);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        fifo_mode,
        0,
    )
    .unwrap();
    assert!(matches!(
        read_untrusted(&fifo, 10),
        Err(FsError::NotRegular { kind: "FIFO", .. })
    ));
    assert!(matches!(
        open_existing_nofollow(&fifo),
        Err(FsError::NotRegular { kind: "FIFO", .. })
    ));
    assert!(matches!(
        open_nofollow(&fifo),
        Err(FsError::NotRegular { kind: "FIFO", .. })
    ));
    let file = dir.path().join("file");
    fs::write(&file, "0123456789").unwrap();
    assert_eq!(read_untrusted(&file, 10).unwrap(), b"0123456789");
    assert!(matches!(
        read_untrusted(&file, 9),
        Err(FsError::TooLarge { limit: 9, .. })
    ));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    assert!(matches!(
        read_untrusted(&link, 10),
        Err(FsError::Symlink { .. })
    ));
    assert!(is_missing(
        &read_untrusted(&dir.path().join("none"), 10).unwrap_err()
    ));
}

/// A hard link is the same file; an existing name is never replaced, and a symlink is
/// linked as itself, as `std::fs::hard_link` does.
#[test]
fn hard_link_links_the_file_and_replaces_nothing() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let from = tmp.path().join("pack");
    fs::write(&from, b"objects").unwrap();
    let to = tmp.path().join("linked");
    hard_link(&from, &to).unwrap();
    assert_eq!(
        fs::metadata(&to).unwrap().ino(),
        fs::metadata(&from).unwrap().ino()
    );
    let other = tmp.path().join("other");
    fs::write(&other, b"mine").unwrap();
    let err = hard_link(&from, &other).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(fs::read(&other).unwrap(), b"mine");
    let link = tmp.path().join("link");
    symlink("pack", &link).unwrap();
    let to_link = tmp.path().join("to-link");
    hard_link(&link, &to_link).unwrap();
    assert!(fs::symlink_metadata(&to_link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn names_where_reads_every_name_of_a_large_directory_and_nothing_of_a_missing_one() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    // More names than one read of the buffer holds: every one is seen, once.
    let mut want: Vec<String> = (0..3000)
        .map(|i| format!("w{i:04}.creating{}", "x".repeat(40)))
        .collect();
    for name in &want {
        fs::write(dir.path().join(name), "").unwrap();
    }
    fs::create_dir(dir.path().join("sub")).unwrap();
    fs::write(dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xff")), "").unwrap();
    let mut got = names_where(dir.path(), |name| {
        name.contains(".creating").then(|| name.to_string())
    });
    got.sort();
    want.sort();
    assert_eq!(got, want);
    let mut all = names_where(dir.path(), |name| Some(name.to_string()));
    all.sort();
    assert_eq!(
        all.len(),
        3001,
        "`.`, `..` and the non-UTF-8 name are left out"
    );
    assert!(all.contains(&"sub".to_string()));
    assert!(names_where(&dir.path().join("missing"), |n| Some(n.to_string())).is_empty());
}
