//! The diesel view of the tables created by the migrations in the top-level `migrations/`.
//! Keep it in step with them by hand (it mirrors what `diesel print-schema` would write).

diesel::table! {
    /// Merchant terminals.
    terminals (number) {
        /// The terminal number.
        number -> Text,
        /// The merchant name shown to payers.
        display_name -> Text,
        /// Inactive terminals cannot create sessions.
        active -> Bool,
        /// When it was provisioned.
        created_at -> Timestamptz,
        /// The hosts callback URLs may point to; NULL: any.
        callback_hosts -> Nullable<Array<Text>>,
        /// How many cards may be declined on one session before it is Failed (1..=10).
        max_card_attempts -> SmallInt,
        /// `CaptureMethod::as_str`: captured with the authorisation, or held.
        capture_method -> Text,
    }
}

diesel::table! {
    /// OAuth clients of terminals.
    oauth_clients (client_id) {
        /// `client_id`.
        client_id -> Text,
        /// Argon2id hash (PHC string) of the secret.
        secret_hash -> Text,
        /// The terminal the client acts for.
        terminal_number -> Text,
        /// Role names.
        roles -> Array<Text>,
        /// Inactive clients get no tokens.
        active -> Bool,
        /// When it was created.
        created_at -> Timestamptz,
        /// Argon2id hash of the secret before the last rotation, while it still works.
        previous_secret_hash -> Nullable<Text>,
        /// When the previous secret stops working.
        previous_secret_expires_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    /// Payment sessions.
    payment_sessions (id) {
        /// `checkoutSessionId`.
        id -> Uuid,
        /// The terminal.
        terminal_number -> Text,
        /// `transactionReferenceNumber`.
        merchant_reference -> Text,
        /// `internalTransactionReferenceNumber`.
        internal_reference -> Text,
        /// `checkout` or `link`.
        kind -> Text,
        /// `callbackSuccessUrl` (checkout only).
        callback_success_url -> Nullable<Text>,
        /// `callbackFailUrl` (checkout only).
        callback_fail_url -> Nullable<Text>,
        /// `callbackBackUrl` (checkout only, optional).
        callback_back_url -> Nullable<Text>,
        /// `totalTransactionAmount`.
        amount -> Numeric,
        /// `currencyCode`.
        currency -> Text,
        /// `generalPurchaseDescription`.
        description -> Nullable<Text>,
        /// `userEmail`.
        email -> Nullable<Text>,
        /// `culture`.
        culture -> Nullable<Text>,
        /// `SessionState::code()`.
        state -> SmallInt,
        /// When it can no longer be paid.
        expires_at -> Timestamptz,
        /// When it was created.
        created_at -> Timestamptz,
        /// When its state last changed.
        updated_at -> Timestamptz,
        /// The attempt whose answer may move the session.
        current_attempt_id -> Nullable<Uuid>,
        /// The merchant's capture, when one was made.
        captured_amount -> Nullable<Numeric>,
        /// The sum of the refunds the processor confirmed.
        refunded_amount -> Numeric,
        /// Generated: `merchant_reference` while the session holds it (all but Expired).
        held_reference -> Nullable<Text>,
        /// Generated: `expires_at` while Pending.
        pending_until -> Nullable<Timestamptz>,
        /// Generated: `expires_at` while ChallengeRequired.
        challenge_until -> Nullable<Timestamptz>,
        /// `metadata`: a JSON object of strings; NULL for none.
        metadata -> Nullable<Jsonb>,
        /// `captureMethod` when the create asked for one; NULL for the terminal's.
        capture_method -> Nullable<Text>,
    }
}

diesel::table! {
    /// Refunds of captured sessions.
    payment_refunds (id) {
        /// `RefundId`: the processor idempotency key.
        id -> Uuid,
        /// Insertion order, to break ties between equal `created_at`.
        seq -> BigInt,
        /// The session.
        session_id -> Uuid,
        /// How much.
        amount -> Numeric,
        /// `LedgerState::as_str`.
        state -> Text,
        /// The processor's refund reference.
        processor_reference -> Nullable<Text>,
        /// `SvcCode::code`.
        svc_code -> Nullable<Text>,
        /// When it was recorded.
        created_at -> Timestamptz,
        /// When it last changed.
        updated_at -> Timestamptz,
        /// The merchant's `Idempotency-Key`, if any: unique per session.
        idempotency_key -> Nullable<Text>,
        /// When the reconciliation sweep next asks about it (NULL: settled or for review).
        next_check_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    /// Captures and voids of authorisations held without capture.
    hold_actions (id) {
        /// `ActionId`: the processor idempotency key derives from it.
        id -> Uuid,
        /// Insertion order, to break ties between equal `created_at`.
        seq -> BigInt,
        /// The session.
        session_id -> Uuid,
        /// `HoldActionKind::as_str`.
        kind -> Text,
        /// A capture's amount; a void's is the authorised amount.
        amount -> Numeric,
        /// `LedgerState::as_str`.
        state -> Text,
        /// What the processor holds captured after a confirmed capture.
        captured_amount -> Nullable<Numeric>,
        /// `SvcCode::code`.
        svc_code -> Nullable<Text>,
        /// The merchant's `Idempotency-Key`, if any: unique per session.
        idempotency_key -> Nullable<Text>,
        /// When the reconciliation sweep next asks about it (NULL: settled).
        next_check_at -> Nullable<Timestamptz>,
        /// When it was recorded.
        created_at -> Timestamptz,
        /// When it last changed.
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    /// Line items of a session, in order.
    session_items (session_id, position) {
        /// The session.
        session_id -> Uuid,
        /// 0-based position in the request.
        position -> Integer,
        /// `itemCode`.
        item_code -> Nullable<Text>,
        /// `quantity`.
        quantity -> BigInt,
        /// `description`.
        description -> Nullable<Text>,
        /// `amount`.
        amount -> Numeric,
    }
}

diesel::table! {
    /// Additional charges of a session, in order.
    session_charges (session_id, position) {
        /// The session.
        session_id -> Uuid,
        /// 0-based position in the request.
        position -> Integer,
        /// `chargeName`.
        name -> Nullable<Text>,
        /// `chargeAmount`.
        amount -> Numeric,
    }
}

diesel::table! {
    /// Card submissions: brand and last four digits only.
    payment_attempts (id) {
        /// `AttemptId`.
        id -> Uuid,
        /// Insertion order, to break ties between equal `created_at`.
        seq -> BigInt,
        /// The session.
        session_id -> Uuid,
        /// `CardBrand::as_str`.
        card_brand -> Text,
        /// Last four digits.
        card_last4 -> Text,
        /// The processor's reference.
        processor_reference -> Nullable<Text>,
        /// Where the 3DS challenge happens.
        challenge_url -> Nullable<Text>,
        /// `AttemptState::as_str`.
        state -> Text,
        /// `SvcCode::code`.
        svc_code -> Nullable<Text>,
        /// The processor's payment-method reference (what a replay needs).
        payment_method -> Text,
        /// The return address sent with the authorisation (what a replay needs).
        return_url -> Text,
        /// Reconciliation checks made without an answer.
        checks -> Integer,
        /// When reconciliation next asks the processor.
        next_check_at -> Nullable<Timestamptz>,
        /// When it was made.
        created_at -> Timestamptz,
        /// When it last changed.
        updated_at -> Timestamptz,
        /// `CaptureMethod::as_str` the authorisation was sent with (what a replay needs).
        capture_method -> Text,
    }
}

diesel::table! {
    /// Idempotency keys of the create routes, per terminal, with the response they replay.
    idempotency_keys (terminal_number, idempotency_key) {
        /// The terminal the key belongs to (the caller's).
        terminal_number -> Text,
        /// The merchant's `Idempotency-Key`.
        idempotency_key -> Text,
        /// SHA-256 of the request's method, path and body.
        fingerprint -> Binary,
        /// The current claim's token.
        claim_token -> Uuid,
        /// When the current claim was made.
        created_at -> Timestamptz,
        /// Until when the claim holds the key without a response.
        locked_until -> Timestamptz,
        /// The saved response's status.
        response_status -> Nullable<SmallInt>,
        /// The saved response's media type.
        response_type -> Nullable<Text>,
        /// The saved response's body.
        response_body -> Nullable<Binary>,
        /// When the response was saved.
        completed_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    /// The processor events absorbed, each once.
    processor_notices (id) {
        /// The processor's event id.
        id -> Text,
        /// When it was absorbed.
        absorbed_at -> Timestamptz,
    }
}

diesel::table! {
    /// Disputes of captured sessions, as the processor last reported each.
    payment_disputes (reference) {
        /// The processor's dispute reference.
        reference -> Text,
        /// Insertion order, to break ties between equal `opened_at`.
        seq -> BigInt,
        /// The session.
        session_id -> Uuid,
        /// The disputed amount.
        amount -> Numeric,
        /// The bank's reason.
        reason -> Text,
        /// `DisputeStatus::as_str`.
        status -> Text,
        /// When first recorded.
        opened_at -> Timestamptz,
        /// When last changed.
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    /// The card-testing guard: one row per processor answer to a card post (keyed hashes
    /// only).
    card_guard_answers (id) {
        /// Insertion order.
        id -> BigInt,
        /// The session's terminal.
        terminal_number -> Text,
        /// The session posted to.
        session_id -> Uuid,
        /// HMAC of the client's address, when known.
        address_key -> Nullable<Text>,
        /// HMAC of the card number.
        card_key -> Nullable<Text>,
        /// Whether the processor declined the card.
        declined -> Bool,
        /// When the processor answered.
        answered_at -> Timestamptz,
    }
}

diesel::table! {
    /// Proofs of work spent, each once.
    card_guard_proofs (id) {
        /// The challenge's signature.
        id -> Text,
        /// When it stops being valid.
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    /// Terminals flagged as under card testing.
    card_guard_alerts (terminal_number) {
        /// The terminal.
        terminal_number -> Text,
        /// Since its `terminal.card_testing_suspected`.
        since -> Timestamptz,
    }
}

diesel::table! {
    /// E-mail receipts: the transactional outbox of the payments' successes, one per session.
    receipt_mails (id) {
        /// The mail's id.
        id -> Uuid,
        /// The session paid (unique).
        session_id -> Uuid,
        /// The attempt that paid.
        attempt_id -> Uuid,
        /// The session's terminal.
        terminal_number -> Text,
        /// `MailState::as_str`.
        state -> Text,
        /// Sendings made.
        attempts -> Integer,
        /// When it is next due.
        next_attempt_at -> Timestamptz,
        /// The worker's lease.
        claim -> Nullable<Uuid>,
        /// Until when the lease holds.
        claimed_until -> Nullable<Timestamptz>,
        /// The last failure.
        last_error -> Nullable<Text>,
        /// When it was queued.
        created_at -> Timestamptz,
        /// When the mail server accepted it.
        sent_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(oauth_clients -> terminals (terminal_number));
diesel::joinable!(payment_disputes -> payment_sessions (session_id));
diesel::joinable!(payment_sessions -> terminals (terminal_number));
diesel::joinable!(session_items -> payment_sessions (session_id));
diesel::joinable!(session_charges -> payment_sessions (session_id));
diesel::joinable!(payment_attempts -> payment_sessions (session_id));
diesel::joinable!(payment_refunds -> payment_sessions (session_id));
diesel::joinable!(hold_actions -> payment_sessions (session_id));
diesel::joinable!(idempotency_keys -> terminals (terminal_number));

diesel::allow_tables_to_appear_in_same_query!(
    terminals,
    oauth_clients,
    payment_sessions,
    session_items,
    session_charges,
    payment_attempts,
    payment_refunds,
    hold_actions,
    idempotency_keys,
    processor_notices,
    payment_disputes,
    card_guard_answers,
    card_guard_proofs,
    card_guard_alerts,
    receipt_mails,
);
