package flowersapp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/snapshots"
)

// ToolVotingBlocs is who votes with whom in a DAO's proposals reading.
const ToolVotingBlocs = "voting_blocs"

// VotingBlocsResult is what voting_blocs answers.
type VotingBlocsResult struct {
	SHA256 string `json:"sha256"`
	snapshots.VotingBlocs
	Demo bool `json:"demo,omitempty"`
}

// VotingBlocs is voting_blocs over a stored proposals reading.
func (s *FlowerService) VotingBlocs(ctx context.Context, sha string, q snapshots.BlocsQuery) (VotingBlocsResult, error) {
	l, err := s.loadSide(ctx, "sha256", sha)
	if err != nil {
		return VotingBlocsResult{}, err
	}
	b, err := snapshots.Blocs(l.Snapshot, q)
	if err != nil {
		return VotingBlocsResult{}, err
	}
	return VotingBlocsResult{SHA256: sha, VotingBlocs: b, Demo: l.Demo()}, nil
}

func (s *FlowerService) votingBlocsTool() toolkit.Tool {
	return toolkit.WithIO(toolkit.Tool{
		Name: ToolVotingBlocs,
		Description: "Who votes with whom in a DAO's proposals reading (near-dao-proposals): every pair of voters that voted on at least min_common proposals " +
			"together (default 3), with how many they shared (common), how many they voted alike (agreed) and the agreement share, the most alike first, paged by offset and limit " +
			"(default 20, at most 100); and blocs, the groups joined by pairs agreeing at least min_agreement (default 0.8). The 1,000 most active voters are paired. " +
			"Another reading is bad_input.",
	}, func(ctx context.Context, _ toolkit.Call, in votingBlocsInput) (VotingBlocsResult, error) {
		q := snapshots.BlocsQuery{MinCommon: in.MinCommon, Offset: in.Offset, Limit: in.Limit}
		if in.MinAgreement != nil {
			q.MinAgreement = *in.MinAgreement
		}
		return s.VotingBlocs(ctx, in.SHA256, q)
	})
}

type votingBlocsInput struct {
	SHA256       string              `json:"sha256" jsonschema:"a stored near-dao-proposals reading's sha256"`
	MinCommon    int                 `json:"min_common,omitempty" jsonschema:"the fewest proposals a pair voted on together (default 3)"`
	MinAgreement *snapshots.Fraction `json:"min_agreement,omitempty" jsonschema:"the agreement share a bloc's pairs reach (default 0.8)"`
	Offset       int                 `json:"offset,omitempty" jsonschema:"where the pairs' page starts"`
	Limit        int                 `json:"limit,omitempty" jsonschema:"how many pairs (default 20)"`
}

func (votingBlocsInput) RefineSchema(sc *jsonschema.Schema) {
	toolkit.Property(sc, "sha256").Pattern = toolkit.Sha256Pattern
	toolkit.Property(sc, "min_common").Minimum = jsonschema.Ptr(1.0)
	toolkit.Property(sc, "min_common").Maximum = jsonschema.Ptr(10000.0)
	ma := toolkit.Property(sc, "min_agreement")
	*ma = jsonschema.Schema{Type: "number", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(1.0), Description: ma.Description}
	toolkit.Property(sc, "offset").Minimum = jsonschema.Ptr(0.0)
	toolkit.Property(sc, "limit").Minimum = jsonschema.Ptr(1.0)
	toolkit.Property(sc, "limit").Maximum = jsonschema.Ptr(float64(snapshots.MaxBlocsLimit))
}
