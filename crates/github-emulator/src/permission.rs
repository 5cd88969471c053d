//! A user's role on the emulated repository, with GitHub's names for it (`role_name` and the
//! legacy `permission` word) and its rank for comparisons. No state and no HTTP here.

/// A user's role on the emulated repository, as GitHub's `role_name` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    Admin,
    Maintain,
    Write,
    Triage,
    Read,
    None,
}

impl Permission {
    /// Rank for comparisons: `None` is 0, `Admin` is 5.
    pub(crate) fn rank(self) -> u8 {
        match self {
            Permission::None => 0,
            Permission::Read => 1,
            Permission::Triage => 2,
            Permission::Write => 3,
            Permission::Maintain => 4,
            Permission::Admin => 5,
        }
    }

    /// Whether this role includes `other`.
    pub(crate) fn at_least(self, other: Permission) -> bool {
        self.rank() >= other.rank()
    }

    /// GitHub's finer `role_name`.
    pub(crate) fn role_name(self) -> &'static str {
        match self {
            Permission::Admin => "admin",
            Permission::Maintain => "maintain",
            Permission::Write => "write",
            Permission::Triage => "triage",
            Permission::Read => "read",
            Permission::None => "none",
        }
    }

    /// GitHub's legacy `permission` word: maintain reads as write, triage as read.
    pub(crate) fn legacy_name(self) -> &'static str {
        match self {
            Permission::Admin => "admin",
            Permission::Maintain | Permission::Write => "write",
            Permission::Triage | Permission::Read => "read",
            Permission::None => "none",
        }
    }

    /// Parses a role name as written in a seed file.
    pub(crate) fn parse(word: &str) -> Option<Permission> {
        Some(match word {
            "admin" => Permission::Admin,
            "maintain" => Permission::Maintain,
            "write" => Permission::Write,
            "triage" => Permission::Triage,
            "read" => Permission::Read,
            "none" => Permission::None,
            _ => return None,
        })
    }
}
