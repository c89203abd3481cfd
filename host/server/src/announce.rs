//! Resource change notices: what the open domains' [`Surfaces`] see
//! change is told to every session and `subscriptions/listen` request that
//! asked, once per burst.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionSink};
use tokio_util::sync::CancellationToken;

use crate::domain::surface::Surfaces;

/// The resources a client subscribed to, by URI.
pub type Subscriptions = Arc<Mutex<BTreeSet<String>>>;

/// Gathered after a first change before anything is announced, so that a
/// burst (a checkout, an editor's save-by-rename) is one notification.
const SETTLE: Duration = Duration::from_millis(150);

/// Who hears the announcements, and of what.
pub enum Audience {
    /// A session that negotiated with `initialize`: every `list_changed`,
    /// and `updated` for what it subscribed to with `resources/subscribe`.
    Session {
        peer: Peer<RoleServer>,
        subscriptions: Subscriptions,
    },
    /// One `subscriptions/listen` request (protocol 2026-07-28): what its
    /// accepted filter names, until `stop`.
    Listen {
        sink: SubscriptionSink,
        stop: CancellationToken,
    },
}

impl Audience {
    fn wants_list(&self) -> bool {
        match self {
            Audience::Session { .. } => true,
            Audience::Listen { sink, .. } => sink.accepted().resources_list_changed == Some(true),
        }
    }

    fn subscribed(&self) -> Vec<String> {
        match self {
            Audience::Session { subscriptions, .. } => subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned()
                .collect(),
            Audience::Listen { sink, .. } => sink
                .accepted()
                .resource_subscriptions
                .clone()
                .unwrap_or_default(),
        }
    }

    /// Send one notification; `false` once the audience is gone.
    async fn tell(&self, updated: Option<String>) -> bool {
        match (self, updated) {
            // A session without `initialize` (protocol 2026-07-28) hears
            // changes only through its `subscriptions/listen` requests.
            (Audience::Session { peer, .. }, _) if peer.peer_info().is_none() => true,
            (Audience::Session { peer, .. }, None) => {
                peer.notify_resource_list_changed().await.is_ok()
            }
            (Audience::Session { peer, .. }, Some(uri)) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            (Audience::Listen { sink, .. }, None) => {
                sink.notify_resource_list_changed().await.is_ok()
            }
            (Audience::Listen { sink, .. }, Some(uri)) => {
                sink.notify_resource_updated(uri).await.is_ok()
            }
        }
    }

    /// Whether it can no longer hear (its session or listen request
    /// ended).
    fn ended(&self) -> bool {
        match self {
            Audience::Session { peer, .. } => peer.is_transport_closed(),
            Audience::Listen { stop, .. } => stop.is_cancelled(),
        }
    }
}

/// The filter kura accepts out of a `subscriptions/listen` request: the
/// resource list and any resource of `served` asked for.
pub fn accepted_filter(
    requested: &SubscriptionFilter,
    served: &[Arc<dyn Surfaces>],
) -> SubscriptionFilter {
    let mut f = SubscriptionFilter::new();
    f.resources_list_changed = requested.resources_list_changed;
    f.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|u| served.iter().any(|s| s.owns(u)))
            .cloned()
            .collect()
    });
    f
}

/// Tells every audience what one domain's watcher sees, once per burst:
/// `notifications/resources/list_changed` when what its list depends on
/// differs, and `notifications/resources/updated` for each subscribed
/// resource a change touches. One watcher listener and one list key for
/// all audiences, started with the server: a `subscriptions/listen`
/// added right after its acknowledgment still hears a change made just
/// before (the burst settles first).
#[derive(Clone, Default)]
pub struct Announcer {
    audiences: Arc<Mutex<Vec<Arc<Audience>>>>,
}

impl Announcer {
    pub fn start(domain: Arc<dyn Surfaces>) -> Announcer {
        let announcer = Announcer::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<PathBuf>>();
        domain.listen(Box::new(move |paths| tx.send(paths.to_vec()).is_ok()));
        let root = domain.root().to_owned();
        let audiences = announcer.audiences.clone();
        let list_key = |d: Arc<dyn Surfaces>| async move {
            tokio::task::spawn_blocking(move || d.list_key())
                .await
                .unwrap_or_default()
        };
        tokio::spawn(async move {
            // Watch before the first list, so no change falls between the
            // list and the watcher's start (the start-up sync may open it
            // later).
            let opening = domain.clone();
            let _ = tokio::task::spawn_blocking(move || opening.watch()).await;
            let mut known = list_key(domain.clone()).await;
            while let Some(first) = rx.recv().await {
                tokio::time::sleep(SETTLE).await;
                let mut paths = vec![first];
                while let Ok(more) = rx.try_recv() {
                    paths.push(more);
                }
                let changed = relative(&root, &paths);
                let now = list_key(domain.clone()).await;
                let list_changed = now != known;
                known = now;
                let all: Vec<Arc<Audience>> =
                    audiences.lock().unwrap_or_else(|e| e.into_inner()).clone();
                for audience in all {
                    if !audience.hear(&*domain, list_changed, &changed).await {
                        let mut kept = audiences.lock().unwrap_or_else(|e| e.into_inner());
                        kept.retain(|a| !Arc::ptr_eq(a, &audience));
                    }
                }
            }
        });
        announcer
    }

    /// Add an audience, and forget those that ended since the last one
    /// came: the list holds the live sessions and listens, however many
    /// came and went between two changes.
    pub fn add(&self, audience: Arc<Audience>) {
        self.forget_ended();
        self.audiences
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(audience);
    }

    /// Forget the audiences that ended now, not at the next change: an
    /// ended listen's sink would otherwise hold rmcp's response channel
    /// open, and a closed input would wait for it before the process ends.
    pub fn forget_ended(&self) {
        self.audiences
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|a| !a.ended());
    }
}

/// Root-relative segments of each changed path; an empty one (a change
/// with no path) stands for anything.
fn relative(root: &std::path::Path, paths: &[Vec<PathBuf>]) -> Vec<Vec<String>> {
    paths
        .iter()
        .flat_map(|ps| {
            if ps.is_empty() {
                vec![vec![]]
            } else {
                ps.iter()
                    .filter_map(|p| p.strip_prefix(root).ok())
                    .map(|rel| {
                        rel.iter()
                            .map(|c| c.to_string_lossy().into_owned())
                            .collect()
                    })
                    .collect()
            }
        })
        .collect()
}

impl Audience {
    /// Tell this audience of one burst; `false` once it is gone.
    async fn hear(
        &self,
        domain: &dyn Surfaces,
        list_changed: bool,
        changed: &[Vec<String>],
    ) -> bool {
        if self.ended() {
            return false;
        }
        if list_changed && self.wants_list() && !self.tell(None).await {
            return false;
        }
        for uri in self.subscribed() {
            if changed.iter().any(|c| domain.updates(&uri, c)) && !self.tell(Some(uri)).await {
                return false;
            }
        }
        true
    }
}
