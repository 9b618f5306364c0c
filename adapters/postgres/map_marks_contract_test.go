package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestMapMarksContract(t *testing.T) {
	porttest.MapMarksContract(t, func(t *testing.T) ports.MapMarks {
		return postgres.NewMapMarkRepository(pgtest.New(t).DB)
	})
}

// Retention deletes a picture no profile shows, but never a logo a map's
// mark shows; once no mark shows it, it goes like any other.
func TestRetentionKeepsTheLogosMarksShow(t *testing.T) {
	db := pgtest.New(t)
	marks := postgres.NewMapMarkRepository(db.DB)
	logo := &ports.StoredPicture{SHA256: "2222222222222222222222222222222222222222222222222222222222222222", MediaType: "image/png", Bytes: []byte("png"), Width: 1, Height: 1}
	require.NoError(t, marks.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: json.RawMessage(`{"logo":{}}`), Logo: logo, Again: time.Hour}))
	_, err := db.Pool.Exec(t.Context(), `UPDATE media SET created_at = now() - interval '2 hours'`)
	require.NoError(t, err)
	ret := postgres.NewRetention(db.DB)
	n, err := ret.Delete(t.Context(), ports.UnshownPictures, time.Hour, 100)
	require.NoError(t, err)
	require.Zero(t, n, "a logo a mark shows was deleted")
	require.NoError(t, marks.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: json.RawMessage(`{"logo":null}`), Again: time.Hour}))
	n, err = ret.Delete(t.Context(), ports.UnshownPictures, time.Hour, 100)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "a logo no mark shows any more is kept")
}
