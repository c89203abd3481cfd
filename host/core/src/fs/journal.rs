//! The hook through which a root tells its history of every change it is
//! about to make, so that the bytes a change replaces are kept before they
//! are gone (`kura-history` implements it).

use super::RelPath;
use crate::error::Result;

/// What a [`super::Root`] reports of each change to its files and folders.
pub trait Journal: Send + Sync {
    /// File `p` is about to go from `before` to `after` (None: no file
    /// there). An error refuses the change: nothing is written.
    fn file(&self, p: &RelPath, before: Option<&[u8]>, after: Option<&[u8]>) -> Result<()>;

    /// The change to `p` just reported by [`Journal::file`] failed (the
    /// file changed meanwhile, no space, a name taken): it was likely not
    /// made, and the journal looks at what `p` holds to know.
    fn unmade(&self, _p: &RelPath) {}

    /// Folder `p` was just made (`made`) or removed by the change in
    /// progress.
    fn folder(&self, p: &RelPath, made: bool);
}
