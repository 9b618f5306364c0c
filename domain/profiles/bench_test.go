package profiles_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/petal-near/petal/domain/profiles"
)

// BenchmarkCheckPicture checks the largest picture a profile takes (4,096 ×
// 4,096 px) beside its floor, png.Decode alone, and the refused bomb.
//
//	go test ./domain/profiles -run '^$' -bench BenchmarkCheckPicture -benchtime 5x
func BenchmarkCheckPicture(b *testing.B) {
	img := image.NewNRGBA(image.Rect(0, 0, profiles.MaxPictureSide, profiles.MaxPictureSide))
	for y := range profiles.MaxPictureSide {
		for x := range profiles.MaxPictureSide {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x >> 4), G: uint8(y >> 4), B: 128, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	big := buf.Bytes()
	if len(big) > profiles.MaxPictureBytes {
		b.Fatalf("the test picture is %d bytes", len(big))
	}
	_, bombPNG := bomb(b)
	b.Run("png-4096x4096/check", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			if _, err := profiles.CheckPicture(profiles.PNG, big); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("png-4096x4096/floor-png.Decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			if _, err := png.Decode(bytes.NewReader(big)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bomb-100000x100000/refused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := profiles.CheckPicture(profiles.PNG, bombPNG); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}
