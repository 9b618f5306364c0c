package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/datasets"
)

// KeptLayer is a layer as kept: in an exploration, by its hash.
type KeptLayer struct {
	Hash        string
	Layer       datasets.Layer
	Exploration string
	CreatedAt   time.Time
	Seq         int64
}

// KeptVersion is a dataset version as kept, with how many accounts its list
// holds (counted when it was made).
type KeptVersion struct {
	Hash        string
	Version     datasets.Version
	Count       int
	Exploration string
	CreatedAt   time.Time
	Seq         int64
}

// LayerQuery picks layers or versions: Owner's, from all their explorations
// (Owner "": Exploration's alone), About an address when not "", after
// AfterSeq, at most Limit, oldest first.
type LayerQuery struct {
	Owner, Exploration, About string
	AfterSeq                  int64
	Limit                     int
}

// LayerStore keeps layers and dataset versions (migrations/000027_layers).
type LayerStore interface {
	// KeepLayer keeps a layer and the version it makes in an exploration, each
	// once by its hash (existed then says so). Past datasets.MaxPerProject
	// of either nothing is kept and the error is bad_input.
	KeepLayer(ctx context.Context, l KeptLayer, v KeptVersion) (layerExisted, versionExisted bool, err error)
	// KeepVersion keeps a version in an exploration, once by its hash.
	KeepVersion(ctx context.Context, v KeptVersion) (existed bool, err error)
	// Layer and Version find one by hash as q.Owner and q.Exploration say
	// (About and the page ignored), or errs.NotFound.
	Layer(ctx context.Context, q LayerQuery, hash string) (KeptLayer, error)
	Version(ctx context.Context, q LayerQuery, hash string) (KeptVersion, error)
	Layers(ctx context.Context, q LayerQuery) ([]KeptLayer, error)
	Versions(ctx context.Context, q LayerQuery) ([]KeptVersion, error)
}
