//! The live story feed: one reader per zone of its `story` stream, broadcast to every
//! `GET /events` client as Server-Sent Events. Live only: a client sees signals raised after
//! it connects, and a slow one skips ahead rather than holding the readers back.

use std::sync::Arc;

use actix_web::{HttpResponse, web};

use super::AdminState;
use crate::bus::{EventBus, StreamKind};

/// Story signals a slow `/events` reader may fall behind by before it skips ahead.
const STORY_FEED_BUFFER: usize = 256;

/// Starts one reader per zone of its `story` stream (consumer group `group`: each instance of
/// a cluster has its own, so each sees every signal) and returns the channel they broadcast
/// to; each `GET /events` subscribes to it. Stops with `stopped`.
pub fn story_feed(
    bus: &Arc<dyn EventBus>,
    zones: impl IntoIterator<Item = String>,
    group: &str,
    stopped: &tokio::sync::watch::Receiver<bool>,
) -> tokio::sync::broadcast::Sender<String> {
    let (sender, _) = tokio::sync::broadcast::channel(STORY_FEED_BUFFER);
    for zone in zones {
        let (bus, sender, mut stopped) = (Arc::clone(bus), sender.clone(), stopped.clone());
        let group = group.to_owned();
        tokio::spawn(async move {
            let Ok(mut consumer) = bus
                .consumer(&zone, StreamKind::Story, &group, "inspector")
                .await
            else {
                tracing::warn!(zone, "inspector: the story stream cannot be read");
                return;
            };
            loop {
                let batch = tokio::select! {
                    batch = consumer.next_batch(64, std::time::Duration::from_millis(500)) => batch,
                    _ = stopped.changed() => return,
                };
                let Ok(batch) = batch else {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    continue;
                };
                let ids: Vec<String> = batch.iter().map(|d| d.id.clone()).collect();
                for delivery in batch {
                    // No subscriber is not an error: the feed is live only.
                    let _ = sender.send(delivery.body);
                }
                let _ = consumer.ack(&ids).await;
            }
        });
    }
    sender
}

/// `GET /events`: story signals as Server-Sent Events (`event: story_signal`, the envelope as
/// data), live from the moment of connecting.
pub async fn events(state: web::Data<AdminState>) -> HttpResponse {
    use tokio::sync::broadcast::error::RecvError;
    let receiver = state.story_feed.subscribe();
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(body) => {
                    let event = format!("event: story_signal\ndata: {body}\n\n");
                    return Some((Ok::<_, actix_web::Error>(web::Bytes::from(event)), receiver));
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(stream)
}
