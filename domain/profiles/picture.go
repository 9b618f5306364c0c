package profiles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"

	"golang.org/x/image/webp"
	"golang.org/x/sync/semaphore"
)

// A picture's limits (the contract's): its bytes, and each side in pixels.
const (
	MaxPictureBytes = 2 << 20
	MaxPictureSide  = 4096
	// MaxPictureDecodeBytes bounds what decoding one picture takes: its
	// pixels at the decoder's bytes per pixel, and what the decoder holds
	// beside them (an interlaced PNG's passes, a progressive JPEG's
	// coefficients). It is a 4,096 × 4,096 8-bit RGBA picture's pixels
	// (64 MiB) and its decoder's rows and state: the side limit alone let a
	// 16-bit one cost twice that, four times interlaced.
	MaxPictureDecodeBytes = 65 << 20
	// DecodeBytesAtOnce bounds what this process's picture decodes take
	// together, wherever they are decoded (profiles, maps' logos): one of
	// the largest at a time, many small ones. The garbage collector lets
	// the heap grow to twice what is live, so each decode's pixels may
	// still be resident while the next is decoded: two of the largest at
	// once peaked at 354 MiB for three people's two pictures each, one at
	// 225 MiB (TestPicturesAreBoundedByWhatDecodingThemTakes).
	DecodeBytesAtOnce = MaxPictureDecodeBytes
)

// decoding is this process's decodes' share of memory, weighed in bytes.
var decoding = semaphore.NewWeighted(DecodeBytesAtOnce)

// The picture types a profile takes. An SVG is never one: it is a document
// that can run script, not a picture.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	WebP = "image/webp"
	// SVG is a map's logo only (domain/maps.CheckSVG), served under a CSP
	// that runs nothing; a profile never takes one.
	SVG = "image/svg+xml"
)

// Ext is the file extension a picture of mediaType is served under, as
// FastFS names an upload (media/{sha256}.{ext}).
func Ext(mediaType string) string {
	switch mediaType {
	case PNG:
		return "png"
	case JPEG:
		return "jpg"
	case WebP:
		return "webp"
	case SVG:
		return "svg"
	}
	return ""
}

// MediaTypeOfExt is the picture type an extension names ("" for none).
func MediaTypeOfExt(ext string) string {
	switch ext {
	case "png":
		return PNG
	case "jpg", "jpeg":
		return JPEG
	case "webp":
		return WebP
	case "svg":
		return SVG
	}
	return ""
}

// Picture is a checked picture: its bytes as sent, named by their SHA-256.
type Picture struct {
	SHA256        string
	MediaType     string
	Bytes         []byte
	Width, Height int
}

// Address is where this site serves the picture.
func (p Picture) Address() string { return MediaAddress(p.SHA256, p.MediaType) }

// MediaAddress is the site's address of a picture by its name and type.
func MediaAddress(sha, mediaType string) string {
	return "/api/v1/media/" + sha + "." + Ext(mediaType)
}

// PictureError says why bytes are not a picture this site keeps.
type PictureError struct{ Reason string }

func (e *PictureError) Error() string { return e.Reason }

func refuse(format string, args ...any) *PictureError {
	return &PictureError{Reason: fmt.Sprintf(format, args...)}
}

const dataPrefix = "data:"

// IsDataURL reports whether s is a data: URL, picture or not.
func IsDataURL(s string) bool {
	return len(s) >= len(dataPrefix) && strings.EqualFold(s[:len(dataPrefix)], dataPrefix)
}

// DecodeDataURL reads data:image/webp|jpeg|png;base64,… into its declared
// type and bytes. The length is checked before anything is decoded.
func DecodeDataURL(s string) (mediaType string, data []byte, err error) {
	if !IsDataURL(s) {
		return "", nil, refuse("not a data: URL")
	}
	head, payload, ok := strings.Cut(s[len(dataPrefix):], ",")
	if !ok {
		return "", nil, refuse("a data: URL without a comma before its data")
	}
	mediaType, enc, _ := strings.Cut(strings.ToLower(head), ";")
	if strings.HasPrefix(mediaType, "image/svg") {
		return "", nil, refuse("an SVG is never accepted as a picture: send a PNG, JPEG or WebP")
	}
	if mediaType != PNG && mediaType != JPEG && mediaType != WebP {
		return "", nil, refuse("a picture must be image/png, image/jpeg or image/webp, not %q", cut(mediaType, 40))
	}
	if enc != "base64" {
		return "", nil, refuse("a picture's data: URL must be base64 (data:%s;base64,…)", mediaType)
	}
	if len(payload) > base64.StdEncoding.EncodedLen(MaxPictureBytes) {
		return "", nil, refuse("the picture is over 2 MiB (%d base64 characters)", len(payload))
	}
	data, err = base64.StdEncoding.Strict().DecodeString(payload)
	if err != nil {
		return "", nil, refuse("the picture's base64 is not valid: %v", err)
	}
	return mediaType, data, nil
}

// CheckPicture proves data is a picture of the declared type that this site
// keeps, or says why not:
//
//  1. at most 2 MiB, and the format its first bytes say is the declared one
//     (an SVG, or anything else, is refused by name);
//  2. nothing hides beside it (a polyglot): the file ends where the format
//     says it ends (PNG's IEND, JPEG's EOI, WebP's RIFF length), and no markup
//     a browser or another reader could take for a page is inside it;
//  3. its header's size, read before any pixel (image.DecodeConfig), is at
//     most 4,096 px a side, and what decoding it takes (DecodeCost: bytes
//     per pixel, interlacing and progressive scans counted) at most
//     MaxPictureDecodeBytes, so a decompression bomb costs nothing;
//  4. then it decodes whole, pixels and all, once this process's decodes
//     have room for its cost (DecodeBytesAtOnce).
func CheckPicture(declared string, data []byte) (Picture, error) {
	return CheckPictureContext(context.Background(), declared, data)
}

// ErrNoRoomToDecode is a picture not checked because ctx ended while it
// waited for room to decode: this site was busy, the picture may be fine (not
// a refusal of it, so not a *PictureError).
var ErrNoRoomToDecode = errors.New("the picture could not be checked in time: this site is decoding others")

// CheckPictureContext is CheckPicture that stops waiting for room to decode
// when ctx ends (ErrNoRoomToDecode).
func CheckPictureContext(ctx context.Context, declared string, data []byte) (Picture, error) {
	if len(data) == 0 {
		return Picture{}, refuse("the picture is empty")
	}
	if len(data) > MaxPictureBytes {
		return Picture{}, refuse("the picture is over 2 MiB (%d bytes)", len(data))
	}
	format := sniff(data)
	if format == "" {
		if looksLikeMarkup(data[:min(len(data), 512)]) {
			return Picture{}, refuse("an SVG or other markup is never accepted as a picture: send a PNG, JPEG or WebP")
		}
		return Picture{}, refuse("the bytes are not a PNG, JPEG or WebP")
	}
	if format != declared {
		return Picture{}, refuse("the data: URL says %s, but the bytes are %s", declared, format)
	}
	var end error
	switch format {
	case PNG:
		end = pngEnd(data)
	case JPEG:
		end = jpegEnd(data)
	case WebP:
		end = webpEnd(data)
	}
	if end != nil {
		return Picture{}, end
	}
	if m := markupIn(data); m != "" {
		return Picture{}, refuse("the picture holds markup (%q): a file that is two things at once is refused", m)
	}
	decodeConfig, decode := decoders(format)
	cfg, err := decodeConfig(bytes.NewReader(data))
	if err != nil {
		return Picture{}, refuse("the picture's header can't be read: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Picture{}, refuse("the picture has no pixels (%d × %d)", cfg.Width, cfg.Height)
	}
	if cfg.Width > MaxPictureSide || cfg.Height > MaxPictureSide {
		return Picture{}, refuse("the picture is %d × %d px; at most %d px a side", cfg.Width, cfg.Height, MaxPictureSide)
	}
	cost, what := DecodeCost(format, data, cfg)
	if cost > MaxPictureDecodeBytes {
		return Picture{}, refuse("the picture takes %d MiB to decode (%d × %d px, %s); at most %d MiB: send it smaller, in 8-bit colour, or not interlaced",
			cost>>20, cfg.Width, cfg.Height, what, MaxPictureDecodeBytes>>20)
	}
	if err := decoding.Acquire(ctx, cost); err != nil {
		return Picture{}, fmt.Errorf("%w: %w", ErrNoRoomToDecode, err)
	}
	img, err := decode(bytes.NewReader(data))
	decoding.Release(cost)
	if err != nil {
		return Picture{}, refuse("the picture is truncated or corrupt: %v", err)
	}
	if b := img.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return Picture{}, refuse("the picture's header says %d × %d, its pixels %d × %d", cfg.Width, cfg.Height, b.Dx(), b.Dy())
	}
	sum := sha256.Sum256(data)
	return Picture{SHA256: hex.EncodeToString(sum[:]), MediaType: format, Bytes: data, Width: cfg.Width, Height: cfg.Height}, nil
}

func decoders(format string) (func(r *bytes.Reader) (image.Config, error), func(r *bytes.Reader) (image.Image, error)) {
	switch format {
	case PNG:
		return func(r *bytes.Reader) (image.Config, error) { return png.DecodeConfig(r) },
			func(r *bytes.Reader) (image.Image, error) { return png.Decode(r) }
	case JPEG:
		return func(r *bytes.Reader) (image.Config, error) { return jpeg.DecodeConfig(r) },
			func(r *bytes.Reader) (image.Image, error) { return jpeg.Decode(r) }
	default:
		return func(r *bytes.Reader) (image.Config, error) { return webp.DecodeConfig(r) },
			func(r *bytes.Reader) (image.Image, error) { return webp.Decode(r) }
	}
}

// DecodeCost is what decoding data takes in bytes, an upper bound read from
// its header and cfg before any pixel, and what kind of picture it is (for a
// refusal's reason). The decoders' own allocations are what it bounds
// (TestDecodeCostBoundsTheDecoders measures them):
//   - PNG: the image at Go's bytes per pixel for its colour type and depth
//     (a 16-bit one is 8 bytes a pixel), two rows and zlib's state; interlaced, the seven passes are
//     allocated beside the whole image, so twice that.
//   - JPEG: one byte a pixel per component (YCbCr 4:4:4 and CMYK at most);
//     progressive, 64 int32 coefficients per 8×8 block of each component
//     are kept beside it, 4 bytes a pixel per component more.
//   - WebP: lossy, YCbCr 4:2:0 and an alpha plane, under 3 bytes a pixel;
//     lossless, the NRGBA pixels and a transform's buffer of the same size.
func DecodeCost(format string, data []byte, cfg image.Config) (int64, string) {
	// Sides rounded up to whole 16-pixel blocks, as JPEG and VP8 decode.
	w, h := int64(cfg.Width+15)&^15, int64(cfg.Height+15)&^15
	px := w * h
	switch format {
	case PNG:
		if len(data) < 29 {
			return px * 16, "PNG"
		}
		depth, colorType, interlaced := data[24], data[25], data[28] == 1
		perPixel, what := int64(1), "PNG"
		switch colorType {
		case 0:
			perPixel, what = 1, fmt.Sprintf("%d-bit grey", depth)
		case 3:
			perPixel, what = 1, "paletted"
		case 2:
			perPixel, what = 4, fmt.Sprintf("%d-bit RGB", depth)
		case 4:
			perPixel, what = 4, fmt.Sprintf("%d-bit grey and alpha", depth)
		case 6:
			perPixel, what = 4, fmt.Sprintf("%d-bit RGBA", depth)
		}
		if depth == 16 {
			perPixel *= 2
		}
		// Beside the pixels: two rows (this and the last, unfiltered) and
		// zlib's window and tables.
		cost := px*perPixel + 2*w*perPixel + 64<<10
		if interlaced {
			cost *= 2
			what += ", interlaced"
		}
		return cost, what
	case JPEG:
		components := int64(3)
		switch cfg.ColorModel {
		case color.GrayModel:
			components = 1
		case color.CMYKModel:
			components = 4
		}
		cost := px * components
		what := fmt.Sprintf("%d-component JPEG", components)
		if jpegProgressive(data) {
			cost += px * components * 4
			what = "progressive " + what
		}
		return cost, what
	default:
		if webpLossless(data) {
			return px * 8, "lossless WebP"
		}
		return px * 3, "lossy WebP"
	}
}

// jpegProgressive: data has a progressive frame header (SOF2, SOF6, SOF10
// or SOF14) before its first scan.
func jpegProgressive(data []byte) bool {
	at := 2
	for at+4 <= len(data) && data[at] == 0xFF {
		marker := data[at+1]
		switch marker {
		case 0xC2, 0xC6, 0xCA, 0xCE:
			return true
		case 0xDA:
			return false
		}
		if marker == 0xFF {
			at++
			continue
		}
		at += 2 + int(binary.BigEndian.Uint16(data[at+2:]))
	}
	return false
}

// webpLossless: data's RIFF holds a VP8L chunk (simple or extended format).
func webpLossless(data []byte) bool {
	for at := 12; at+8 <= len(data); {
		kind := string(data[at : at+4])
		if kind == "VP8L" {
			return true
		}
		if kind == "VP8 " {
			return false
		}
		n := int(binary.LittleEndian.Uint32(data[at+4:]))
		if n < 0 || n > len(data) {
			return true // a malformed length: assume the dearer kind
		}
		at += 8 + n + n&1
	}
	return false
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// sniff is the picture type data's first bytes say, or "".
func sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, pngSignature):
		return PNG
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return JPEG
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// pngEnd walks a PNG's chunks: the file must end with its IEND chunk.
func pngEnd(data []byte) error {
	at := len(pngSignature)
	for {
		if len(data)-at < 12 {
			return refuse("the PNG is truncated: it ends before its IEND chunk")
		}
		n := binary.BigEndian.Uint32(data[at:])
		kind := string(data[at+4 : at+8])
		if uint64(n) > uint64(len(data)-at-12) {
			return refuse("the PNG is truncated: its %q chunk runs past the end", cut(kind, 4))
		}
		at += 12 + int(n)
		if kind == "IEND" {
			if at != len(data) {
				return refuse("the PNG has %d bytes after its IEND chunk: a file that is two things at once is refused", len(data)-at)
			}
			return nil
		}
	}
}

// jpegEnd walks a JPEG's segments and scans: the file must end with EOI.
func jpegEnd(data []byte) error {
	at := 2 // after SOI
	for {
		// Markers may be padded with 0xFF.
		for at < len(data) && data[at] == 0xFF && at+1 < len(data) && data[at+1] == 0xFF {
			at++
		}
		if len(data)-at < 2 || data[at] != 0xFF {
			return refuse("the JPEG is truncated or corrupt: no marker where one belongs")
		}
		marker := data[at+1]
		at += 2
		switch {
		case marker == 0xD9: // EOI
			if at != len(data) {
				return refuse("the JPEG has %d bytes after its end: a file that is two things at once is refused", len(data)-at)
			}
			return nil
		case marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7): // TEM, RSTn: no length
			continue
		}
		if len(data)-at < 2 {
			return refuse("the JPEG is truncated: a segment's length is missing")
		}
		n := int(binary.BigEndian.Uint16(data[at:]))
		if n < 2 || n > len(data)-at {
			return refuse("the JPEG is truncated: a segment runs past the end")
		}
		at += n
		if marker != 0xDA { // SOS: entropy-coded data follows, up to the next marker
			continue
		}
		for {
			i := bytes.IndexByte(data[at:], 0xFF)
			if i < 0 || at+i+1 >= len(data) {
				return refuse("the JPEG is truncated: its image data has no end")
			}
			at += i
			if next := data[at+1]; next == 0x00 || (next >= 0xD0 && next <= 0xD7) || next == 0xFF {
				at++ // a stuffed byte, a restart marker or padding: still the scan
				if next != 0xFF {
					at++
				}
				continue
			}
			break
		}
	}
}

// webpEnd checks a WebP's RIFF length: the file must be exactly as long.
func webpEnd(data []byte) error {
	n := uint64(binary.LittleEndian.Uint32(data[4:8])) + 8
	switch {
	case n > uint64(len(data)):
		return refuse("the WebP is truncated: %d of %d bytes", len(data), n)
	case n < uint64(len(data)):
		return refuse("the WebP has %d bytes after its end: a file that is two things at once is refused", uint64(len(data))-n)
	}
	return nil
}

// markups are what a browser, a PDF reader or an archive tool would take for
// a document of their own. Each is long enough that compressed pixels spell
// one by chance about once in 10^4 2-MiB pictures at worst (<svg plus a
// space), never for the longer ones.
var markups = []string{"<script", "<html", "<!doctype", "<?xml", "<iframe", "<body", "<object", "<embed",
	"<svg ", "<svg>", "<svg/", "<svg\n", "<svg\t", "<svg\r", "javascript:", "%pdf-"}

// markupIn is the first markup found in data (case ignored), or "".
func markupIn(data []byte) string {
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c != '<' && c != 'j' && c != 'J' && c != '%' {
			continue
		}
		for _, m := range markups {
			if m[0] == lower(c) && hasFoldPrefix(data[i:], m) {
				return m
			}
		}
	}
	return ""
}

// looksLikeMarkup: text starting with '<' (after a BOM and white space).
func looksLikeMarkup(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '<'
}

func hasFoldPrefix(b []byte, lowerPrefix string) bool {
	if len(b) < len(lowerPrefix) {
		return false
	}
	for i := 0; i < len(lowerPrefix); i++ {
		if lower(b[i]) != lowerPrefix[i] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
