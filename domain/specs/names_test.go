package specs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A person's names go on the petals they name, escaped as any name is, and
// only where the labels show names.
func TestNamePetals(t *testing.T) {
	spec, err := Propose(daoSnapshot(), daoSHA, "")
	require.NoError(t, err)
	lay := func() *Flower {
		f, err := Layout(spec, daoSnapshot())
		require.NoError(t, err)
		return f
	}
	f := lay()
	account := f.Petals[0].Account
	names := map[string]string{account: `Dekan <b>`, "near:mainnet:nobody.near": "Nobody"}
	require.True(t, NamePetals(f, DefaultView(), names))
	svg := string(Render(f, DefaultView()).SVG)
	assert.Contains(t, svg, "Dekan &lt;b&gt;")
	assert.NotContains(t, svg, "Nobody")
	assertWellFormed(t, []byte(svg))

	none := DefaultView()
	none.Labels = ViewLabelsNone
	assert.False(t, NamePetals(lay(), none, names), "the view shows no labels")
	assert.False(t, NamePetals(lay(), DefaultView(), map[string]string{"near:mainnet:nobody.near": "Nobody"}), "no petal of theirs")
	assert.False(t, NamePetals(lay(), DefaultView(), nil))
	plain := lay()
	assert.Equal(t, Render(plain, DefaultView()).SHA256, Render(lay(), DefaultView()).SHA256, "without names, the picture everyone sees")
}
