package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthAndInfo(t *testing.T) {
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodGet, "/api/v1/health", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var h map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	assert.Equal(t, true, h["ok"])
	assert.Equal(t, "up", h["db"])
	assert.Equal(t, "recorded", h["llm"])
	assert.Equal(t, "gated", h["agent_access"])
	assert.Equal(t, false, h["public"])
	assert.Equal(t, "1.0.0", h["tools_version"])
	assert.Equal(t, "dev", h["build_id"])

	res, body = p.do(t, http.MethodGet, "/api/v1/info", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"tools_version":"1.0.0","build_id":"dev","server_implementation":"petal"}`, body)
}
