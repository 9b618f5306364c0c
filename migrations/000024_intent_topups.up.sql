-- Top-ups through NEAR Intents (1Click, issue 18): a person's quote and where
-- its swap stands, keyed by the quote's deposit address. The credit is added
-- once, at SUCCESS, in the same transaction that sets credited_at, which is
-- set exactly when the status is SUCCESS.
CREATE TABLE intent_topups (
    deposit_address     text PRIMARY KEY CHECK (length(deposit_address) BETWEEN 1 AND 128),
    deposit_memo        text NOT NULL DEFAULT '' CHECK (length(deposit_memo) <= 128),
    person_id           text NOT NULL REFERENCES people (id),
    usd_micros          bigint NOT NULL CHECK (usd_micros > 0 AND usd_micros <= 1000000000),
    origin_asset        text NOT NULL CHECK (length(origin_asset) BETWEEN 1 AND 256),
    refund_to           text NOT NULL CHECK (length(refund_to) BETWEEN 1 AND 256),
    amount_in           text NOT NULL,
    amount_in_formatted text NOT NULL,
    amount_in_usd       text NOT NULL,
    amount_out          text NOT NULL,
    amount_out_usd      text NOT NULL,
    deadline            timestamptz NOT NULL,
    quote               bytea NOT NULL CHECK (length(quote) <= 65536),
    status              text NOT NULL CHECK (status IN ('PENDING_DEPOSIT', 'KNOWN_DEPOSIT_TX', 'PROCESSING', 'SUCCESS',
                                                        'INCOMPLETE_DEPOSIT', 'REFUNDED', 'FAILED')),
    origin_tx           text NOT NULL DEFAULT '',
    destination_tx      text NOT NULL DEFAULT '',
    credited_micros     bigint NOT NULL DEFAULT 0 CHECK (credited_micros >= 0 AND credited_micros <= usd_micros),
    fee_micros          bigint NOT NULL DEFAULT 0 CHECK (fee_micros >= 0 AND fee_micros <= credited_micros),
    credited_at         timestamptz,
    checked_at          timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'SUCCESS') = (credited_at IS NOT NULL))
);
-- The follow job's batch: open top-ups, least recently checked first.
CREATE INDEX intent_topups_followed ON intent_topups (checked_at NULLS FIRST)
    WHERE status NOT IN ('SUCCESS', 'REFUNDED', 'FAILED');
CREATE INDEX intent_topups_person ON intent_topups (person_id, created_at DESC);
