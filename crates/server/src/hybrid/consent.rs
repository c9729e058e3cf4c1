//! Consent tickets: a request the policy holds for consent gets an id; the same request sent
//! again with `x-lily-consent: <id>` goes ahead. An id is random (128 bits from the operating
//! system), single-use (taken out of the store on its first presentation, whatever the
//! outcome), bound to a SHA-256 of the request's content (so it cannot be spent on another
//! request), and expires. Kept in memory: a restart forgets every ticket, which only means
//! asking again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// The store is bounded: past this many live tickets the oldest are dropped, so a client
/// cannot grow it without limit by sending many consent-requiring requests.
const MAX_TICKETS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConsentError {
    #[error("the consent id is unknown or was already used")]
    Unknown,
    #[error("the consent has expired")]
    Expired,
    #[error("the request differs from the one consented to")]
    Mismatch,
}

struct Ticket {
    content: [u8; 32],
    expires: Instant,
}

pub struct ConsentStore {
    ttl: Duration,
    tickets: Mutex<HashMap<String, Ticket>>,
}

/// SHA-256 of the request content the gate read (`lily_gate::request::content_fingerprint`).
pub fn content_hash(fingerprint: &str) -> [u8; 32] {
    Sha256::digest(fingerprint.as_bytes()).into()
}

impl ConsentStore {
    pub fn new(ttl: Duration) -> Self {
        Self { ttl, tickets: Mutex::new(HashMap::new()) }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A new ticket for this content; the id to hand to the client.
    pub fn issue(&self, content: [u8; 32]) -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::getrandom(&mut bytes)?;
        let id = format!("consent-{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let now = Instant::now();
        let mut tickets = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
        tickets.retain(|_, t| t.expires > now);
        if tickets.len() >= MAX_TICKETS {
            if let Some(oldest) = tickets.iter().min_by_key(|(_, t)| t.expires).map(|(k, _)| k.clone()) {
                tickets.remove(&oldest);
            }
        }
        tickets.insert(id.clone(), Ticket { content, expires: now + self.ttl });
        Ok(id)
    }

    /// Spends the ticket `id` on a request with this content.
    pub fn redeem(&self, id: &str, content: [u8; 32]) -> Result<(), ConsentError> {
        let ticket = self.tickets.lock().unwrap_or_else(|e| e.into_inner()).remove(id).ok_or(ConsentError::Unknown)?;
        if ticket.expires <= Instant::now() {
            Err(ConsentError::Expired)
        } else if !crate::routes::constant_time_eq(&ticket.content, &content) {
            Err(ConsentError::Mismatch)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_single_use_bound_and_expire() {
        let store = ConsentStore::new(Duration::from_secs(60));
        let a = content_hash("a");
        let id = store.issue(a).unwrap();
        assert_ne!(id, store.issue(a).unwrap(), "ids are random");
        assert_eq!(store.redeem(&id, content_hash("b")), Err(ConsentError::Mismatch));
        // The failed attempt spent it.
        assert_eq!(store.redeem(&id, a), Err(ConsentError::Unknown));
        let id = store.issue(a).unwrap();
        assert_eq!(store.redeem(&id, a), Ok(()));
        assert_eq!(store.redeem(&id, a), Err(ConsentError::Unknown));
        let short = ConsentStore::new(Duration::from_millis(1));
        let id = short.issue(a).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(short.redeem(&id, a), Err(ConsentError::Expired));
    }
}
