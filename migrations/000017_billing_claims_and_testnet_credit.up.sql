-- Each person's last ask for their bills from NEAR AI (GET /api/v1/me/usage
-- reconciles first): at most one ask a minute per person, across replicas.
-- One row per person; it goes with the person.
CREATE TABLE billing_claims (
    person_id  text PRIMARY KEY REFERENCES people (id) ON DELETE CASCADE,
    claimed_at timestamptz NOT NULL
);

-- Credit from testnet NEAR (free) is marked on its ledger entry, so testnet
-- money is never mistaken for real money (issue 10, item 2).
ALTER TABLE credit_entries ADD COLUMN testnet boolean NOT NULL DEFAULT false;
UPDATE credit_entries e SET testnet = true FROM credit_topups t
WHERE e.kind = 'top_up' AND t.network = 'testnet' AND e.note = 'NEAR transfer ' || t.tx_hash;
