// SPDX-License-Identifier: MIT
//! Plugin options: a declared, typed set of keys ([`Opt`]), parsed into
//! [`Options`] as fring hands them over, with each bad one reported back at
//! load (fring then names its `FILE:LINE:COLUMN`).
use std::ffi::CString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::host::host_fn;

/// The type of an option's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptKind {
    /// Any string.
    Str,
    /// `true/false`, `yes/no`, `on/off`, `1/0` (the host's parser).
    Bool,
    /// A size in bytes: `4096`, `64KiB`, `1M`, `2GiB` (binary units; the
    /// host's parser).
    Size,
    /// An unsigned integer (decimal, or `0x` hex, `0o` octal).
    U64,
    /// A signed integer.
    I64,
    /// A file system path (not empty).
    Path,
}

impl OptKind {
    fn name(self) -> &'static str {
        match self {
            OptKind::Str => "string",
            OptKind::Bool => "boolean",
            OptKind::Size => "size",
            OptKind::U64 => "unsigned integer",
            OptKind::I64 => "integer",
            OptKind::Path => "path",
        }
    }
}

/// One option a filesystem takes: key, type, help line, whether it must be
/// given and whether it may repeat (a YAML list repeats its key). Built
/// with `const` constructors for [`Filesystem::OPTIONS`](crate::Filesystem::OPTIONS):
/// `Opt::path("source", "directory to mirror").required()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opt {
    /// The key (nested YAML maps arrive as dotted keys: `cache.ttl`).
    pub key: &'static str,
    /// The value's type.
    pub kind: OptKind,
    /// One line for `fring plugins -v`.
    pub help: &'static str,
    /// Loading fails without it.
    pub required: bool,
    /// It may be given more than once ([`Options::get_all`]).
    pub repeated: bool,
}

impl Opt {
    /// An option of `kind`.
    pub const fn new(key: &'static str, kind: OptKind, help: &'static str) -> Opt {
        Opt { key, kind, help, required: false, repeated: false }
    }
    /// A string option.
    pub const fn str(key: &'static str, help: &'static str) -> Opt {
        Opt::new(key, OptKind::Str, help)
    }
    /// A boolean option.
    pub const fn bool(key: &'static str, help: &'static str) -> Opt {
        Opt::new(key, OptKind::Bool, help)
    }
    /// A size option.
    pub const fn size(key: &'static str, help: &'static str) -> Opt {
        Opt::new(key, OptKind::Size, help)
    }
    /// An unsigned integer option.
    pub const fn u64(key: &'static str, help: &'static str) -> Opt {
        Opt::new(key, OptKind::U64, help)
    }
    /// A signed integer option.
    pub const fn i64(key: &'static str, help: &'static str) -> Opt {
        Opt::new(key, OptKind::I64, help)
    }
    /// A path option.
    pub const fn path(key: &'static str, help: &'static str) -> Opt {
        Opt::new(key, OptKind::Path, help)
    }
    /// The same, required.
    pub const fn required(mut self) -> Opt {
        self.required = true;
        self
    }
    /// The same, allowed more than once.
    pub const fn repeated(mut self) -> Opt {
        self.repeated = true;
        self
    }
}

/// A parsed option value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// [`OptKind::Str`].
    Str(String),
    /// [`OptKind::Bool`].
    Bool(bool),
    /// [`OptKind::Size`], in bytes.
    Size(u64),
    /// [`OptKind::U64`].
    U64(u64),
    /// [`OptKind::I64`].
    I64(i64),
    /// [`OptKind::Path`].
    Path(PathBuf),
}

/// The options a mount was given, parsed by their declared type, in the
/// order fring handed them over. Handed to
/// [`Filesystem::new`](crate::Filesystem::new). Each getter answers `None`
/// for an option that was not given (or is of another type).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    values: Vec<(&'static str, Value)>,
}

impl Options {
    /// The value of `key` (the last one given).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Every value of a repeated `key`, in order.
    pub fn get_all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.values.iter().filter(move |(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Whether `key` was given.
    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// A string option.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A boolean option.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A size option, in bytes.
    pub fn size(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Value::Size(n) => Some(*n),
            _ => None,
        }
    }

    /// An unsigned integer option.
    pub fn u64(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Value::U64(n) => Some(*n),
            _ => None,
        }
    }

    /// A signed integer option.
    pub fn i64(&self, key: &str) -> Option<i64> {
        match self.get(key)? {
            Value::I64(n) => Some(*n),
            _ => None,
        }
    }

    /// A path option.
    pub fn path(&self, key: &str) -> Option<&Path> {
        match self.get(key)? {
            Value::Path(p) => Some(p),
            _ => None,
        }
    }

    /// Parses and stores one option against the declaration `spec`; the
    /// error is the message to log (fring shows it after the option's place).
    pub(crate) fn set(&mut self, spec: &'static [Opt], key: &str, value: &str) -> Result<(), String> {
        let Some(opt) = spec.iter().find(|o| o.key == key) else {
            return Err(if spec.is_empty() {
                format!("unknown option '{key}' (this plugin takes no options)")
            } else {
                let known: Vec<&str> = spec.iter().map(|o| o.key).collect();
                format!("unknown option '{key}' (known: {})", known.join(", "))
            });
        };
        if !opt.repeated && self.contains(opt.key) {
            return Err(format!("option '{key}' given more than once"));
        }
        let v = parse(opt.kind, value).ok_or_else(|| {
            format!("bad value '{value}' for option '{key}': expected a {}", expected(opt.kind))
        })?;
        self.values.push((opt.key, v));
        Ok(())
    }

    /// The first required option missing, as a message.
    pub(crate) fn check_required(&self, spec: &[Opt]) -> Result<(), String> {
        let missing: Vec<&str> =
            spec.iter().filter(|o| o.required && !self.contains(o.key)).map(|o| o.key).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "missing required option{} {}",
                if missing.len() > 1 { "s" } else { "" },
                missing.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ")
            ))
        }
    }
}

fn expected(kind: OptKind) -> &'static str {
    match kind {
        OptKind::Bool => "boolean (true/false, yes/no, on/off, 1/0)",
        OptKind::Size => "size (4096, 64KiB, 1M, 2GiB)",
        OptKind::Path => "path (not empty)",
        k => k.name(),
    }
}

fn parse(kind: OptKind, s: &str) -> Option<Value> {
    Some(match kind {
        OptKind::Str => Value::Str(s.to_owned()),
        OptKind::Path if s.is_empty() => return None,
        OptKind::Path => Value::Path(PathBuf::from(s)),
        OptKind::U64 => Value::U64(parse_u64(s)?),
        OptKind::I64 => Value::I64(match s.strip_prefix('-') {
            Some(rest) => 0i64.checked_sub_unsigned(parse_u64(rest)?)?,
            None => i64::try_from(parse_u64(s)?).ok()?,
        }),
        OptKind::Bool => Value::Bool(parse_bool(s)?),
        OptKind::Size => Value::Size(parse_size(s)?),
    })
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(o) = s.strip_prefix("0o") {
        u64::from_str_radix(o, 8).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    let c = CString::new(s).ok()?;
    let mut out = 0i32;
    match host_fn!(parse_bool) {
        // SAFETY: a host function; both pointers valid for the call.
        Some(f) => (unsafe { f(c.as_ptr(), &mut out) } == 0).then_some(out != 0),
        None => match s {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
    }
}

fn parse_size(s: &str) -> Option<u64> {
    let c = CString::new(s).ok()?;
    let mut out = 0u64;
    match host_fn!(parse_size) {
        // SAFETY: a host function; both pointers valid for the call.
        Some(f) => (unsafe { f(c.as_ptr(), &mut out) } == 0).then_some(out),
        None => s.parse().ok(),
    }
}

/// The `config_help` lines (`key: type: meaning`) `fring plugins -v` shows.
pub(crate) fn config_help(spec: &[Opt]) -> String {
    let mut s = String::new();
    for o in spec {
        let _ = write!(
            s,
            "{}: {}: {}{}{}",
            o.key,
            o.kind.name(),
            o.help,
            if o.required { " (required)" } else { "" },
            if o.repeated { " (repeatable)" } else { "" }
        );
        s.push('\n');
    }
    s.pop();
    s
}
