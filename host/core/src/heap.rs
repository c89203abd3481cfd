//! The allocator's free memory, handed back to the system. glibc keeps
//! what a burst of work freed (a vector build's texts, a crowd of HTTP
//! sessions) in its arenas for reuse, so a process stays the size of its
//! busiest moment; after such a burst, [`give_back`] returns the free
//! pages. [`few_arenas`] keeps the number of arenas to the number of
//! cores: glibc's default (eight per core) lets each of kura's threads
//! (tokio's, rayon's, the encoder's) keep a partly used arena of its own.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn give_back() {
    // SAFETY: malloc_trim only releases free memory of the allocator's own
    // arenas; it takes no pointer and is safe to call from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own terms.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn give_back() {}

/// At most one arena per core, unless `MALLOC_ARENA_MAX` says otherwise.
/// Called first thing, before any thread allocates.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn few_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let arenas = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
    // SAFETY: mallopt sets one of the allocator's parameters; it takes no
    // pointer, and changes only how arenas created later are chosen.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn few_arenas() {}
