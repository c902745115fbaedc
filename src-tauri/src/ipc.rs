//! What the window may call, typed on both sides: each command with its
//! arguments and its answer, in one table. Tauri's handler is built from
//! it ([`handler`]), and `ui/src/generated/Shell.ts` is written from it and
//! from `shell_events` (`cargo xtask types`): `ui/src/api.ts` calls and
//! listens through that file, so a command or event misnamed there, or
//! given the wrong arguments or payload, fails the window's build. The
//! tests below hold the table to the commands as written.
//!
//! It never does what a command does: each stays a few lines in its module.

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::path::PathBuf;

use leasedesk_desk::workspace::{CheckedOut, Closed, ListOrder};
use leasedesk_desk::{
    Activity, Decision, FileRow, FolderRows, FoundRows, HistoryPage, Overview, Restored,
};
use leasedesk_model::model::*;
use tauri::ipc::Channel;
use ts_rs::{TypeVisitor, TS};

use crate::admin::{self, Role, RuleRow, SeenFile, StudioView};
use crate::changes::{self, ChangeDone};
use crate::commands::{self, Added, CertificateView, Connected, Moved, SettingsView};
use crate::inbox;
use crate::listing;
use crate::plugins;
use crate::review;
use crate::settings::Settings;
use crate::shell_events::{self, EventVisitor, ShellEvent};
use crate::studio::{self, InviteLink, JoinView};
use crate::versions;

/// Builds the table: the handler, and the commands as data. A type may be
/// followed by `as` and the type whose TypeScript the window sees instead
/// (as ts-rs's `#[ts(as = ..)]`); a command with no `->` answers `null`.
macro_rules! table {
    ($( $module:ident :: $name:ident (
        $( $arg:ident : $ty:ty $(as $via:ty)? ),* $(,)?
    ) $( -> $answer:ty $(as $answer_via:ty)? )? ; )*) => {
        /// Every command, for `tauri::Builder::invoke_handler`.
        pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$( $module::$name ),*]
        }

        /// Each command as the window calls it, in the table's order.
        pub fn command_table() -> Vec<Command> {
            vec![$(Command {
                module: stringify!($module),
                name: stringify!($name),
                args: vec![$( (stringify!($arg), typed!($ty $(as $via)?)) ),*],
                answer: typed!($( $answer $(as $answer_via)? )?),
            }),*]
        }
    };
}

macro_rules! typed {
    () => {
        typed!(())
    };
    ($ty:ty as $via:ty) => {
        Typed::seen_as::<$ty, $via>(stringify!($ty))
    };
    ($ty:ty) => {
        Typed::of::<$ty>(stringify!($ty))
    };
}

table! {
    commands::overview() -> Overview;
    commands::refresh_row(artifact: ArtifactId) -> FileRow;
    listing::folder_rows(folder: String, offset: u64 as Number, limit: u32, order: Option<ListOrder>) -> FolderRows;
    listing::folders(folder: String) -> FolderList;
    listing::search_files(text: String, after: Option<String>, limit: u32) -> FoundRows;
    listing::held_by_others(after: Option<String>, limit: u32) -> FoundRows;
    listing::folder_counts(folders: Vec<String>) -> Vec<FolderCount>;
    commands::check_out(artifact: ArtifactId, note: Option<String>, ttl_seconds: Option<u64> as Option<Number>, on_progress: Channel<Moved> as ChannelOf<Moved>) -> CheckedOut;
    commands::extend(checkout: CheckoutId, ttl_seconds: Option<u64> as Option<Number>) -> Checkout;
    commands::check_in(checkout: CheckoutId, message: Option<String>, upload: String, on_progress: Channel<Moved> as ChannelOf<Moved>) -> Closed;
    commands::cancel_upload(upload: String);
    commands::cancel_checkout(checkout: CheckoutId) -> Closed;
    commands::update_file(artifact: ArtifactId) -> Option<PathBuf>;
    commands::get_copy(checkout: CheckoutId, on_progress: Channel<Moved> as ChannelOf<Moved>) -> CheckedOut;
    commands::add_files(paths: Vec<PathBuf>, folder: String) -> Vec<Added>;
    commands::decide(proposal: ProposalId, decision: Decision) -> Proposal;
    versions::compare_proposal(artifact: ArtifactId, proposal: ProposalId) -> PathBuf;
    versions::history(artifact: ArtifactId, before: Option<u64> as Option<Number>, limit: Option<u32>) -> HistoryPage;
    versions::open_copy(artifact: ArtifactId, version: u64 as Number) -> PathBuf;
    versions::restore_version(artifact: ArtifactId, version: u64 as Number) -> Restored;
    versions::checkin_draft(checkout: CheckoutId) -> String;
    commands::events(after: u64 as Number, limit: u32) -> EventPage;
    commands::recent_events(limit: u32) -> Activity;
    commands::file_paths(ids: Vec<ArtifactId>) -> BTreeMap<ArtifactId, RepoPath>;
    commands::notify_when_free(artifact: ArtifactId, on: bool);
    commands::ask_holder(artifact: ArtifactId, message: Option<String>) -> Request;
    commands::requests() -> Vec<Request>;
    commands::reply_request(request: RequestId, message: String) -> Request;
    commands::withdraw_request(request: RequestId) -> Request;
    commands::take_intent() -> Option<crate::asking::Intent>;
    inbox::inbox(before: Option<u64> as Option<Number>, limit: Option<u32>) -> InboxPage;
    inbox::inbox_unread() -> u64 as Number;
    inbox::mark_inbox_read(up_to: u64 as Number) -> u64 as Number;
    changes::check_out_files(artifacts: Vec<ArtifactId>, note: Option<String>, ttl_seconds: Option<u64> as Option<Number>) -> Vec<CheckedOut>;
    changes::check_in_files(checkouts: Vec<CheckoutId>, message: Option<String>, upload: String, on_progress: Channel<Moved> as ChannelOf<Moved>) -> ChangeDone;
    changes::change(id: ChangeId) -> Change;
    commands::reveal(path: PathBuf) -> ();
    commands::settings() -> SettingsView;
    commands::save_settings(settings: Settings, token: Option<String>) -> SettingsView;
    commands::server_certificate() -> Option<CertificateView>;
    commands::trust_certificate(sha256: String) -> SettingsView;
    commands::test_connection(settings: Settings, token: Option<String>) -> Connected;
    plugins::blender_found() -> Option<PathBuf>;
    plugins::install_blender_add_on() -> ();
    studio::read_invite(text: String, server: Option<String>) -> JoinView;
    studio::join_studio(server: String, code: String, device: String, sha256: Option<String>) -> SettingsView;
    studio::my_devices() -> MyDevices;
    studio::revoke_my_device(id: String) -> Option<MyDevices>;
    studio::add_computer() -> InviteLink;
    studio::take_join_link() -> Option<String>;
    admin::studio() -> StudioView;
    admin::studio_invite(name: String, role: Role, expires_seconds: u64 as Number) -> InviteLink;
    admin::studio_revoke_device(participant: Participant, id: String) -> ();
    admin::studio_put_group(name: String, members: Vec<String>) -> Group;
    admin::studio_delete_group(name: String) -> ();
    admin::studio_put_rules(rules: Vec<RuleRow>) -> Vec<Rule>;
    admin::studio_preview(participant: Participant, rules: Vec<RuleRow>) -> Vec<SeenFile>;
    admin::studio_revoke_invite(id: InviteId) -> ();
    admin::studio_folders() -> Vec<String>;
    review::threads(artifact: ArtifactId) -> Vec<Thread>;
    review::open_thread(artifact: ArtifactId, version: Option<u64> as Option<Number>, proposal: Option<ProposalId>, pin: Option<Pin>, image: Option<ImageSize>, body: String) -> Thread;
    review::comment(thread: ThreadId, body: String) -> Comment;
    review::resolve_thread(thread: ThreadId, resolved: bool) -> Thread;
    review::submit_review(artifact: ArtifactId, version: Option<u64> as Option<Number>, proposal: Option<ProposalId>, decision: ReviewDecision, message: Option<String>) -> Review;
    review::review_state(artifact: ArtifactId, version: Option<u64> as Option<Number>, proposal: Option<ProposalId>) -> ReviewList;
}

/// Each event with its payload, in `shell_events`' order.
pub fn event_table() -> Vec<(&'static str, Typed)> {
    struct Payloads(Vec<(&'static str, Typed)>);
    impl EventVisitor for Payloads {
        fn visit<E: ShellEvent>(&mut self) {
            let rust = std::any::type_name::<E::Payload>();
            self.0.push((E::NAME, Typed::of::<E::Payload>(rust)));
        }
    }
    let mut payloads = Payloads(Vec::new());
    shell_events::each(&mut payloads);
    payloads.0
}

/// A command of the table.
pub struct Command {
    /// The module it is written in (`src-tauri/src/<module>.rs`).
    pub module: &'static str,
    pub name: &'static str,
    /// Its arguments but those Tauri gives (the app, its state), in order.
    pub args: Vec<(&'static str, Typed)>,
    /// What it answers when it does not fail (it fails with a `UiError`).
    pub answer: Typed,
}

/// A type as the table writes it in Rust, and as the window sees it.
pub struct Typed {
    pub rust: &'static str,
    pub ts: String,
    /// The generated types its TypeScript names, with their files.
    imports: BTreeSet<(String, String)>,
}

impl Typed {
    /// `R`, which the window sees as `T`.
    #[expect(
        clippy::extra_unused_type_parameters,
        reason = "`R` is named so that the table's Rust type is one that exists"
    )]
    fn seen_as<R: ?Sized, T: TS + ?Sized + 'static>(rust: &'static str) -> Self {
        Self::of::<T>(rust)
    }

    fn of<T: TS + ?Sized + 'static>(rust: &'static str) -> Self {
        /// As ts-rs visits a field's type: itself and its generics.
        struct Imports(BTreeSet<(String, String)>);
        impl TypeVisitor for Imports {
            fn visit<T: TS + ?Sized + 'static>(&mut self) {
                if let Some(path) = T::output_path() {
                    let file = path.to_string_lossy().trim_end_matches(".ts").to_owned();
                    self.0.insert((T::ident(), format!("./{file}")));
                }
            }
        }
        let mut imports = Imports(BTreeSet::new());
        imports.visit::<T>();
        T::visit_generics(&mut imports);
        Self {
            rust,
            ts: T::name(),
            imports: imports.0,
        }
    }
}

/// The `TS` methods of a type the window only ever sees inline, in an
/// argument: it is never flattened nor declared in a file of its own.
macro_rules! written_inline_only {
    ($what:literal) => {
        fn inline_flattened() -> String {
            panic!(concat!($what, " cannot be flattened"))
        }
        fn decl() -> String {
            panic!(concat!($what, " cannot be declared"))
        }
        fn decl_concrete() -> String {
            panic!(concat!($what, " cannot be declared"))
        }
    };
}

/// A JSON number, as the window passes a `u64` (ts-rs says `bigint`, which
/// JSON does not carry).
pub struct Number;

impl TS for Number {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name() -> String {
        "number".into()
    }
    fn inline() -> String {
        Self::name()
    }
    written_inline_only!("number");
}

/// A `Channel` the window makes and passes (`@tauri-apps/api/core`'s),
/// on which the command sends `T`s.
pub struct ChannelOf<T>(PhantomData<T>);

impl<T: TS> TS for ChannelOf<T> {
    type WithoutGenerics = ChannelOf<ts_rs::Dummy>;
    type OptionInnerType = Self;
    fn name() -> String {
        format!("Channel<{}>", T::name())
    }
    fn inline() -> String {
        format!("Channel<{}>", T::inline())
    }
    fn visit_generics(v: &mut impl TypeVisitor)
    where
        Self: 'static,
    {
        T::visit_generics(v);
        v.visit::<T>();
    }
    written_inline_only!("a channel");
}

/// The file the window's `api.ts` imports: `ShellCommands`, each command's
/// arguments (by the names the call gives them: Tauri's camelCase) and
/// answer; and `ShellEvents`, each event's payload.
pub fn typescript() -> String {
    let (commands, events) = (command_table(), event_table());
    let mut imports = BTreeSet::new();
    for typed in commands
        .iter()
        .flat_map(|c| c.args.iter().map(|(_, t)| t).chain([&c.answer]))
        .chain(events.iter().map(|(_, t)| t))
    {
        imports.extend(typed.imports.iter().cloned());
    }
    let mut out = String::from(
        "// This file was generated from src-tauri/src/ipc.rs (`cargo xtask types`). Do not edit this file manually.\n",
    );
    let channels = commands
        .iter()
        .any(|c| c.args.iter().any(|(_, t)| t.ts.starts_with("Channel<")));
    if channels {
        out.push_str("import type { Channel } from \"@tauri-apps/api/core\";\n");
    }
    for (name, file) in &imports {
        out.push_str(&format!("import type {{ {name} }} from \"{file}\";\n"));
    }
    out.push_str("\n/** Each command the window may call: its arguments, and its answer when it does not fail (a `UiError` when it does). */\nexport type ShellCommands = {\n");
    for command in &commands {
        let args = match command.args.as_slice() {
            [] => "Record<string, never>".to_owned(),
            args => {
                let each: Vec<String> = args
                    .iter()
                    .map(|(name, typed)| format!("{}: {}", camel_case(name), typed.ts))
                    .collect();
                format!("{{ {} }}", each.join(", "))
            }
        };
        out.push_str(&format!(
            "  {}: {{ args: {args}; answer: {} }};\n",
            command.name, command.answer.ts
        ));
    }
    out.push_str("};\n\n/** Each event the shell tells the window, and its payload. */\nexport type ShellEvents = {\n");
    for (name, payload) in &events {
        out.push_str(&format!("  \"{name}\": {};\n", payload.ts));
    }
    out.push_str("};\n");
    out
}

/// An argument's name as the window gives it: Tauri's camelCase of the
/// Rust name (`ttl_seconds` is `ttlSeconds`).
fn camel_case(name: &str) -> String {
    let mut words = name.split('_');
    let mut said = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            said.extend(first.to_uppercase());
            said.push_str(chars.as_str());
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `src-tauri/src/<module>.rs`.
    fn source(module: &str) -> String {
        let path = format!("{}/src/{module}.rs", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn modules() -> Vec<String> {
        let dir = format!("{}/src", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|entry| {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_suffix(".rs").map(str::to_owned)
            })
            .collect();
        names.sort();
        names
    }

    /// A type as written, without its spaces: `Option<String>`.
    fn squeezed(text: &str) -> String {
        text.split_whitespace().collect()
    }

    /// The command `name`'s arguments (name and type, those Tauri gives
    /// left out) and answer as written in `source`; its answer unwrapped
    /// from `UiResult`, and `()` when it has none.
    fn signature(source: &str, name: &str) -> (Vec<(String, String)>, String) {
        let start = source
            .find(&format!("fn {name}("))
            .unwrap_or_else(|| panic!("no fn {name}"))
            + format!("fn {name}(").len();
        // Its parameters: to the `)` that closes the list, split at the
        // commas between them (not those inside a type).
        let (mut depth, mut from, mut args) = (0, start, Vec::new());
        let mut end = start;
        for (at, c) in source[start..].char_indices().map(|(i, c)| (start + i, c)) {
            match c {
                '<' | '(' => depth += 1,
                '>' | ')' if depth > 0 => depth -= 1,
                ',' | ')' if depth == 0 => {
                    if let Some((arg, ty)) = source[from..at].split_once(':') {
                        args.push((arg.trim().to_owned(), squeezed(ty)));
                    }
                    from = at + 1;
                    if c == ')' {
                        end = at + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        args.retain(|(_, ty)| ty != "AppHandle" && !ty.starts_with("State<"));
        // To the body's `{`, or a `desk_commands!` call's `=`.
        let rest = &source[end..source[end..].find(['{', '=']).unwrap() + end];
        let answer = match rest.trim().strip_prefix("->") {
            Some(answer) => squeezed(answer),
            None => "()".to_owned(),
        };
        let answer = match answer.strip_prefix("UiResult<") {
            Some(inner) => inner[..inner.len() - 1].to_owned(),
            None => answer,
        };
        (args, answer)
    }

    #[test]
    fn each_command_takes_and_answers_what_the_table_says() {
        for command in command_table() {
            let (args, answer) = signature(&source(command.module), command.name);
            let listed: Vec<(String, String)> = command
                .args
                .iter()
                .map(|(name, typed)| (name.to_string(), squeezed(typed.rust)))
                .collect();
            assert_eq!(
                listed, args,
                "{}::{}'s arguments",
                command.module, command.name
            );
            assert_eq!(
                squeezed(command.answer.rust),
                answer,
                "{}::{}'s answer",
                command.module,
                command.name
            );
        }
    }

    #[test]
    fn every_command_written_is_in_the_table_once() {
        let mut written = Vec::new();
        for module in modules() {
            let text = source(&module);
            let marked = text.match_indices("\n#[tauri::command]\n");
            for (at, _) in marked {
                let after = &text[at..];
                let name = after[after.find("fn ").unwrap() + 3..]
                    .split('(')
                    .next()
                    .unwrap()
                    .to_owned();
                written.push(format!("{module}::{name}"));
            }
            // Each `fn` of a `desk_commands!` call is a command too.
            for (at, _) in text.match_indices("\ndesk_commands! {\n") {
                let block = &text[at..at + text[at..].find("\n}\n").unwrap()];
                for line in block.lines() {
                    if let Some(name) = line.strip_prefix("    fn ") {
                        let name = name.split('(').next().unwrap();
                        written.push(format!("{module}::{name}"));
                    }
                }
            }
        }
        let mut listed: Vec<String> = command_table()
            .iter()
            .map(|c| format!("{}::{}", c.module, c.name))
            .collect();
        written.sort();
        listed.sort();
        let names: BTreeSet<&str> = command_table().iter().map(|c| c.name).collect();
        assert_eq!(names.len(), listed.len(), "a name twice in the table");
        assert_eq!(listed, written, "the table against the #[tauri::command]s");
    }

    #[test]
    fn the_shell_tells_the_window_only_through_shell_events() {
        // Spelt apart, so that this file does not hold what it looks for.
        let emit = [".emit", "("].concat();
        for module in modules().iter().filter(|m| *m != "shell_events") {
            assert!(
                !source(module).contains(&emit),
                "{module}.rs emits an event itself: send it with `shell_events::tell`"
            );
        }
    }

    #[test]
    fn names_and_types_reach_the_window_as_tauri_gives_them() {
        assert_eq!(camel_case("ttl_seconds"), "ttlSeconds");
        assert_eq!(camel_case("on_progress"), "onProgress");
        assert_eq!(camel_case("sha256"), "sha256");
        let written = typescript();
        for line in [
            "import type { Channel } from \"@tauri-apps/api/core\";",
            "import type { ArtifactId } from \"./ArtifactId\";",
            "  check_out: { args: { artifact: ArtifactId, note: string | null, ttlSeconds: number | null, onProgress: Channel<Moved> }; answer: CheckedOut };",
            "  overview: { args: Record<string, never>; answer: Overview };",
            "  cancel_upload: { args: { upload: string }; answer: null };",
            "  \"store-changed\": null;",
            "  \"activity\": Array<Event>;",
        ] {
            assert!(written.lines().any(|l| l == line), "{line}\nin\n{written}");
        }
        assert!(
            !written.contains("bigint"),
            "a u64 the window gets as a number"
        );
    }

    /// Writes `Shell.ts` beside the ts-rs types (`cargo xtask types` runs
    /// every `export_bindings` test).
    #[test]
    fn export_bindings_shell() {
        let dir = std::env::var_os("TS_RS_EXPORT_DIR").unwrap_or_else(|| "./bindings".into());
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("Shell.ts"), typescript()).unwrap();
    }
}
