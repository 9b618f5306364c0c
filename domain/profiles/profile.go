// Package profiles is a person's profile in NEAR Social's shape (the
// contract's members: name, about, avatar, banner, location, links) and the
// pictures it shows, checked to be pictures. It is pure: no I/O.
package profiles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The contract's limits, in characters.
const (
	MaxName      = 256
	MaxLocation  = 256
	MaxAbout     = 10000
	MaxLinks     = 32
	MaxLinkValue = 2048
	MaxAddress   = 2048 // a fastfs:// address
)

// Profile is a person's profile as kept and answered. An absent member is
// none; avatar and banner are addresses (this site's /api/v1/media/… or a
// fastfs:// one), never the pictures themselves.
type Profile struct {
	Name     string `json:"name,omitempty"`
	About    string `json:"about,omitempty"`
	Avatar   string `json:"avatar,omitempty"`
	Banner   string `json:"banner,omitempty"`
	Location string `json:"location,omitempty"`
	Links    Links  `json:"links,omitempty"`
}

// Input is PUT /api/v1/me/profile's profile: each member optional, null or
// absent to clear. Avatar and banner may be a data: URL of a picture.
type Input struct {
	Name     *string `json:"name"`
	About    *string `json:"about"`
	Avatar   *string `json:"avatar"`
	Banner   *string `json:"banner"`
	Location *string `json:"location"`
	Links    *Links  `json:"links"`
}

// Link is one of links: a service (twitter, github, website…) and its value,
// a handle or an https:// URL.
type Link struct {
	Service string
	Value   string
}

// Links are a profile's links, an object of service: value, in the order
// sent. Decoding stops at the 33rd and refuses anything but strings.
type Links []Link

// root is where the profile sits in PUT's body, { profile }: problems name
// their place from there.
const root = "/profile"

// Problem is one thing wrong with an input, at a JSON Pointer.
type Problem struct {
	Path    string
	Message string
}

func (p *Problem) Error() string { return p.Path + ": " + p.Message }

var (
	servicePattern = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	handlePattern  = regexp.MustCompile(`^@?[A-Za-z0-9][A-Za-z0-9._-]*$`)
	fastfsPattern  = regexp.MustCompile(`^fastfs://[a-z0-9][a-z0-9._-]*(/[A-Za-z0-9._~-]+)+$`)
	mediaPattern   = regexp.MustCompile(`^/api/v1/media/([0-9a-f]{64})\.(png|jpg|webp)$`)
)

// UnmarshalJSON reads an object of service: value.
func (l *Links) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &Problem{Path: root + "/links", Message: "must be an object of service: value"}
	}
	out := Links{}
	for dec.More() {
		if len(out) == MaxLinks {
			return &Problem{Path: root + "/links", Message: fmt.Sprintf("at most %d links", MaxLinks)}
		}
		k, err := dec.Token()
		if err != nil {
			return err
		}
		service, _ := k.(string)
		v, err := dec.Token()
		if err != nil {
			return err
		}
		value, ok := v.(string)
		if !ok {
			return &Problem{Path: root + "/links/" + escape(service), Message: "must be a string: a handle or an https:// URL"}
		}
		out = append(out, Link{Service: service, Value: value})
	}
	*l = out
	return nil
}

// MarshalJSON writes the links as an object, in their order.
func (l Links) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, link := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(link.Service)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(link.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// PictureSlot is avatar or banner.
type PictureSlot string

// The two picture slots.
const (
	Avatar PictureSlot = "avatar"
	Banner PictureSlot = "banner"
)

// PictureRef is what an avatar or banner names: a picture sent now (Data),
// one already on this site (SHA256 and MediaType), or a fastfs:// address.
type PictureRef struct {
	Slot      PictureSlot
	Data      *Picture // a data: URL, checked
	SHA256    string   // this site's address
	MediaType string
	FastFS    string
}

// Checked is an input checked: the profile to keep (its pictures' addresses
// filled in) and the pictures it names.
type Checked struct {
	Profile  Profile
	Pictures []PictureRef
}

// Check checks an input against the contract's limits, decoding and
// checking each picture sent as a data: URL. The first problem is returned
// as a *Problem; ctx ending while a picture waits for room to decode is
// ErrNoRoomToDecode.
func Check(ctx context.Context, in Input) (Checked, error) {
	var out Checked
	text := func(v *string, path string, limit int, dst *string) error {
		if v == nil {
			return nil
		}
		if !utf8.ValidString(*v) {
			return &Problem{Path: path, Message: "is not UTF-8"}
		}
		if n := utf8.RuneCountInString(*v); n > limit {
			return &Problem{Path: path, Message: fmt.Sprintf("at most %d characters, not %d", limit, n)}
		}
		*dst = *v
		return nil
	}
	if err := text(in.Name, root+"/name", MaxName, &out.Profile.Name); err != nil {
		return Checked{}, err
	}
	if err := text(in.About, root+"/about", MaxAbout, &out.Profile.About); err != nil {
		return Checked{}, err
	}
	if err := text(in.Location, root+"/location", MaxLocation, &out.Profile.Location); err != nil {
		return Checked{}, err
	}
	if in.Links != nil {
		if len(*in.Links) > MaxLinks {
			return Checked{}, &Problem{Path: root + "/links", Message: fmt.Sprintf("at most %d links", MaxLinks)}
		}
		for _, l := range *in.Links {
			path := root + "/links/" + escape(l.Service)
			if !servicePattern.MatchString(l.Service) {
				return Checked{}, &Problem{Path: path, Message: "a service is 1 to 32 of a-z, 0-9 and _"}
			}
			if err := checkLinkValue(l.Value); err != nil {
				return Checked{}, &Problem{Path: path, Message: err.Error()}
			}
		}
		out.Profile.Links = *in.Links
	}
	for _, p := range []struct {
		slot PictureSlot
		v    *string
		dst  *string
	}{{Avatar, in.Avatar, &out.Profile.Avatar}, {Banner, in.Banner, &out.Profile.Banner}} {
		if p.v == nil || *p.v == "" {
			continue
		}
		ref, err := checkPictureRef(ctx, p.slot, *p.v)
		if errors.Is(err, ErrNoRoomToDecode) {
			return Checked{}, err
		}
		if err != nil {
			return Checked{}, &Problem{Path: root + "/" + string(p.slot), Message: err.Error()}
		}
		switch {
		case ref.Data != nil:
			*p.dst = ref.Data.Address()
		case ref.SHA256 != "":
			*p.dst = MediaAddress(ref.SHA256, ref.MediaType)
		default:
			*p.dst = ref.FastFS
		}
		out.Pictures = append(out.Pictures, ref)
	}
	return out, nil
}

func checkPictureRef(ctx context.Context, slot PictureSlot, v string) (PictureRef, error) {
	switch {
	case IsDataURL(v):
		declared, data, err := DecodeDataURL(v)
		if err != nil {
			return PictureRef{}, err
		}
		pic, err := CheckPictureContext(ctx, declared, data)
		if err != nil {
			return PictureRef{}, err
		}
		return PictureRef{Slot: slot, Data: &pic}, nil
	case strings.HasPrefix(v, "/api/v1/media/"):
		m := mediaPattern.FindStringSubmatch(v)
		if m == nil {
			return PictureRef{}, fmt.Errorf("a picture on this site is /api/v1/media/<sha256>.png, .jpg or .webp")
		}
		return PictureRef{Slot: slot, SHA256: m[1], MediaType: MediaTypeOfExt(m[2])}, nil
	case strings.HasPrefix(v, "fastfs://"):
		if len(v) > MaxAddress || !fastfsPattern.MatchString(v) {
			return PictureRef{}, fmt.Errorf("a fastfs:// address is fastfs://<account>/<path>, at most %d characters", MaxAddress)
		}
		return PictureRef{Slot: slot, FastFS: v}, nil
	}
	return PictureRef{}, fmt.Errorf("a picture is a data:image/webp, jpeg or png base64 URL, this site's /api/v1/media/… address, or a fastfs:// address")
}

func checkLinkValue(v string) error {
	if v == "" {
		return fmt.Errorf("is empty: a handle or an https:// URL")
	}
	if n := utf8.RuneCountInString(v); n > MaxLinkValue {
		return fmt.Errorf("at most %d characters, not %d", MaxLinkValue, n)
	}
	if handlePattern.MatchString(v) {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.ContainsAny(v, " \t\r\n\\") {
		return fmt.Errorf("must be a handle (letters, digits, . _ -, an @ first) or an https:// URL")
	}
	return nil
}

// escape escapes a member name for a JSON Pointer (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
