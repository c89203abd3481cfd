//! The hook through which a root tells its history of every change it is
//! about to make, so that the bytes a change replaces are kept before they
//! are gone (`kura-history` implements it).

use super::RelPath;
use crate::error::Result;

/// A file about to get a new name, as its recorder hears of it: never read
/// whole (an attachment may be gigabytes), so its bytes stay where they are
/// and go with it.
pub struct Moved<'a> {
    /// Its content's id in a history (a git blob id, hex), hashed as the
    /// file streamed by.
    pub id: String,
    /// Its first bytes (up to [`Moved::HEAD`]): what its front matter says.
    pub head: &'a [u8],
}

impl Moved<'_> {
    /// How much of a moved file its recorder sees.
    pub const HEAD: usize = 64 << 10;
}

/// What a [`super::Root`] reports of each change to its files and folders.
pub trait Recorder: Send + Sync {
    /// File `p` is about to go from `before` to `after` (None: no file
    /// there). An error refuses the change: nothing is written.
    fn file(&self, p: &RelPath, before: Option<&[u8]>, after: Option<&[u8]>) -> Result<()>;

    /// File `from` is about to be renamed `to`, as `file` says.
    /// An error refuses the rename.
    fn moved(&self, from: &RelPath, to: &RelPath, file: &Moved<'_>) -> Result<()>;

    /// The change to `p` just reported by [`Recorder::file`] failed (the
    /// file changed meanwhile, no space, a name taken): it was likely not
    /// made, and the recorder looks at what `p` holds to know.
    fn unmade(&self, _p: &RelPath) {}

    /// The change to `p` just reported was made: the file holds it now.
    fn made(&self, _p: &RelPath) {}

    /// Folder `p` is about to be made or removed. An error refuses it:
    /// nothing is made or removed.
    fn changing_folder(&self, _p: &RelPath) -> Result<()> {
        Ok(())
    }

    /// Folder `p` was just made (`made`) or removed by the change in
    /// progress.
    fn folder(&self, p: &RelPath, made: bool);
}
