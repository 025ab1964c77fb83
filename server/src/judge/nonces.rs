//! The nonce book of both signature schemes (SPEC.md 5.5 and 5.6): every nonce each client
//! used, whether in a `public/auth` client signature or in a signed `Authorization`
//! header, so that a nonce used twice by one client fails whichever scheme carried it.

use std::collections::{HashMap, HashSet};

use super::record::{Call, Record};
use super::signature::presented;
use super::signed::parse_signed;
use super::{Knowledge, Tally};

/// Every nonce each client used, across both signature schemes, with the request that
/// used it first.
#[derive(Debug, Default)]
pub(crate) struct NonceBook {
    seen: HashMap<(String, String), u64>,
    /// Clients already warned about timestamp nonces, per clause: once says it all.
    warned: HashSet<(String, &'static str)>,
}

impl NonceBook {
    /// Checks that the nonce of a signed request was never used before by the same client.
    pub(crate) fn check(
        &mut self,
        record: &Record,
        call: &Call,
        knowledge: &Knowledge,
        tally: &mut Tally,
    ) {
        let (clause, client_id, nonce, timestamp) = if let Some(sig) = presented(call) {
            (
                "client.sig.nonce_unique",
                sig.client_id,
                sig.nonce,
                sig.timestamp,
            )
        } else if let Some(header) = record
            .header("authorization")
            .and_then(|value| parse_signed(value, knowledge.signature_scheme.as_deref()))
        {
            (
                "client.signed.nonce_unique",
                header.client_id,
                header.nonce,
                Some(header.timestamp),
            )
        } else {
            return;
        };
        let (transport, seq) = (record.transport, Some(record.seq));
        if nonce.is_empty() {
            tally.note(
                clause,
                transport,
                "no nonce: the timestamp alone makes the request unique",
            );
            return;
        }
        match self.seen.get(&(client_id.clone(), nonce.clone())) {
            Some(first) => tally.fail(
                clause,
                transport,
                seq,
                format!(
                    "nonce \"{nonce}\" was already used by request #{first}{}",
                    if timestamp.is_some_and(|timestamp| timestamp.to_string() == nonce) {
                        ": the nonce is the millisecond timestamp, so requests signed in the same millisecond share it"
                    } else {
                        ""
                    }
                ),
            ),
            None => {
                if timestamp.is_some_and(|timestamp| timestamp.to_string() == nonce)
                    && self.warned.insert((client_id.clone(), clause))
                {
                    tally.warn(clause, transport, seq, "the nonce is the millisecond timestamp: two requests signed in the same millisecond would reuse it");
                } else {
                    tally.pass(clause, transport);
                }
                self.seen.insert((client_id, nonce), record.seq);
            }
        }
    }
}
