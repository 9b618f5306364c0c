package ports

import (
	"context"
	"time"
)

// StoredPicture is a profile's picture as kept: its bytes under their
// SHA-256, checked to be a picture before they got here.
type StoredPicture struct {
	SHA256        string
	MediaType     string // image/png, image/jpeg or image/webp
	Bytes         []byte
	Width, Height int
}

// PictureUse is a picture a profile shows in a slot (avatar, banner), by its
// name and type.
type PictureUse struct {
	Slot      string
	SHA256    string
	MediaType string
}

// KeptProfile is a person's profile as kept: its JSON and when it was kept.
type KeptProfile struct {
	Body      []byte
	UpdatedAt time.Time
}

// ProfileStore keeps people's profiles and the pictures they show. A
// picture is kept while a profile shows it: replacing a profile deletes the
// pictures no profile shows any more, so what is kept is bounded by the
// people (two pictures each).
type ProfileStore interface {
	// KeepProfile, in one transaction, keeps the new pictures (once each by
	// name), replaces the person's profile with body at at, makes uses the
	// pictures it shows, and deletes the pictures it showed before that no
	// profile shows now. A use naming a picture that isn't kept (or kept
	// with another type) is errs.BadInput, and changes nothing.
	KeepProfile(ctx context.Context, person string, body []byte, pictures []StoredPicture, uses []PictureUse, at time.Time) error
	// Profile is the person's kept profile, or errs.NotFound.
	Profile(ctx context.Context, person string) (KeptProfile, error)
	// Picture is a kept picture by its name, or errs.NotFound.
	Picture(ctx context.Context, sha256 string) (StoredPicture, error)
}
