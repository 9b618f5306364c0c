package moneyapp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
)

func load(env map[string]string) (config.Config, error) {
	return config.LoadConfig(func(k string) string { return env[k] })
}

// GET /api/v1/price follows the switches: its hash changes with them.
func TestThePriceDocumentFollowsTheSwitches(t *testing.T) {
	off, err := load(nil)
	require.NoError(t, err)
	on, err := load(map[string]string{"PETAL_FEE_PER_TURN_USD": "0.01"})
	require.NoError(t, err)
	a, err := moneyapp.NewPayService(off, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil).Price()
	require.NoError(t, err)
	b, err := moneyapp.NewPayService(on, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil).Price()
	require.NoError(t, err)
	assert.False(t, a.Price.BaseFee.C.On)
	assert.True(t, b.Price.BaseFee.C.On)
	assert.NotEqual(t, a.Hash, b.Hash)
}
