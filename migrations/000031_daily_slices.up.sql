-- The day's cap spread over slices (docs/money.md, "The day's cap in
-- slices"): a reservation locks one slice, not the day's one row, so
-- invite and open-server chats don't queue on one lock. The day's account
-- row in credit_accounts stays (holds and entries name it); its spent and
-- held count only holds made before slices. The slices' limits add up to at
-- most the cap minus those, and a slice's holds and charges fit its limit.
CREATE TABLE credit_daily_slices (
    account_id   text NOT NULL REFERENCES credit_accounts (id),
    slice        smallint NOT NULL CHECK (slice >= 0),
    -- The daily cap the slices were last balanced for; -1 for a slice made
    -- but not yet balanced. A changed cap re-balances them at once.
    cap_micros   bigint NOT NULL CHECK (cap_micros >= -1),
    limit_micros bigint NOT NULL DEFAULT 0 CHECK (limit_micros >= 0),
    spent_micros bigint NOT NULL DEFAULT 0 CHECK (spent_micros >= 0),
    held_micros  bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
    PRIMARY KEY (account_id, slice)
);

-- The slice a hold on a day's account is on (NULL: not a day's account, or
-- a hold made before slices, which is on the day's row itself).
ALTER TABLE credit_holds ADD COLUMN slice smallint;
ALTER TABLE credit_holds ADD CONSTRAINT credit_holds_slice_fkey
    FOREIGN KEY (account_id, slice) REFERENCES credit_daily_slices (account_id, slice);
