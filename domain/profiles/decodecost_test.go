package profiles_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/image/webp"

	"github.com/petal-near/petal/domain/profiles"
	"github.com/petal-near/petal/domain/profiles/picturetest"
)

// allocated is what f allocates, in bytes.
func allocated(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// DecodeCost is a bound on what the decoders allocate, measured on each kind
// of picture it tells apart. (A progressive JPEG is not among them: nothing
// here writes one; its coefficients are counted from image/jpeg's source.)
func TestDecodeCostBoundsTheDecoders(t *testing.T) {
	gopher, err := os.ReadFile("testdata/gopher.lossless.webp")
	if err != nil {
		t.Fatal(err)
	}
	lossy, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, format string
		data         []byte
	}{
		{"8-bit RGBA PNG", profiles.PNG, picturetest.RGBA(1000, 700, 8, false)},
		{"16-bit RGBA PNG", profiles.PNG, picturetest.RGBA(1000, 700, 16, false)},
		{"8-bit interlaced PNG", profiles.PNG, picturetest.RGBA(1000, 700, 8, true)},
		{"16-bit interlaced PNG", profiles.PNG, picturetest.RGBA(1000, 700, 16, true)},
		{"paletted PNG", profiles.PNG, pngOf(t, 300, 200)},
		{"JPEG", profiles.JPEG, jpegOf(t, 1000, 700)},
		{"lossless WebP", profiles.WebP, gopher},
		{"lossy WebP", profiles.WebP, lossy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg image.Config
			var decode func() error
			r := func() *bytes.Reader { return bytes.NewReader(c.data) }
			switch c.format {
			case profiles.PNG:
				cfg, err = png.DecodeConfig(r())
				decode = func() error { _, err := png.Decode(r()); return err }
			case profiles.JPEG:
				cfg, err = jpeg.DecodeConfig(r())
				decode = func() error { _, err := jpeg.Decode(r()); return err }
			default:
				cfg, err = webp.DecodeConfig(r())
				decode = func() error { _, err := webp.Decode(r()); return err }
			}
			if err != nil {
				t.Fatal(err)
			}
			cost, what := profiles.DecodeCost(c.format, c.data, cfg)
			var decodeErr error
			used := allocated(func() { decodeErr = decode() })
			if decodeErr != nil {
				t.Fatal(decodeErr)
			}
			t.Logf("%s (%s, %d × %d): the decoder allocated %d bytes, the bound is %d", c.name, what, cfg.Width, cfg.Height, used, cost)
			if used > cost {
				t.Fatalf("the decoder allocated %d bytes, over DecodeCost's %d", used, cost)
			}
			if used < cost/4 {
				t.Fatalf("DecodeCost's %d is over four times the %d bytes allocated: a bound that loose refuses good pictures", cost, used)
			}
		})
	}
}

// At the side limit a 16-bit or interlaced picture is refused from its
// header, with its cost named, before a pixel is decoded; an 8-bit one of
// the same size is kept.
func TestAPictureIsBoundedByWhatDecodingItTakes(t *testing.T) {
	for _, c := range []struct {
		depth      int
		interlaced bool
		says       string
	}{
		{16, false, "takes 128 MiB to decode (4096 × 4096 px, 16-bit RGBA)"},
		{8, true, "takes 128 MiB to decode (4096 × 4096 px, 8-bit RGBA, interlaced)"},
		{16, true, "takes 256 MiB to decode (4096 × 4096 px, 16-bit RGBA, interlaced)"},
	} {
		data := picturetest.RGBA(4096, 4096, c.depth, c.interlaced)
		if len(data) > 200<<10 {
			t.Fatalf("the picture is %d bytes: meant to be small on the wire", len(data))
		}
		var err error
		used := allocated(func() { _, err = profiles.CheckPicture(profiles.PNG, data) })
		if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "at most 65 MiB") {
			t.Fatalf("%d-bit interlaced=%v: %v, want a refusal saying %q", c.depth, c.interlaced, err, c.says)
		}
		if used > 1<<20 {
			t.Fatalf("refusing it allocated %d bytes: its pixels were decoded", used)
		}
	}
	p, err := profiles.CheckPicture(profiles.PNG, picturetest.RGBA(4096, 4096, 8, false))
	if err != nil || p.Width != 4096 {
		t.Fatalf("an 8-bit 4096 × 4096 picture: %v", err)
	}
}
