package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/evm/evmtest"
	"github.com/petal-near/petal/domain/published"
)

// An ERC-20's holders and delegates on a real EVM (go-ethereum's simulated
// chain, OpenZeppelin's ERC20Votes), read through the wired service: listed,
// read fresh over HTTP, drawn, and served over MCP.
func TestERC20ReadingsThroughHTTPAndMCP(t *testing.T) {
	t.Parallel()
	chain := evmtest.NewChain(t, evmtest.Options{Accounts: 3})
	votes := evmtest.Contracts(t)["PetalVotes"]
	token := chain.Deploy(t, votes)
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	chain.Transact(t, 0, votes, token, "mint", chain.Address(0), new(big.Int).Mul(big.NewInt(600), unit))
	chain.Transact(t, 0, votes, token, "mint", chain.Address(1), new(big.Int).Mul(big.NewInt(300), unit))
	chain.Transact(t, 1, votes, token, "transfer", chain.Address(2), new(big.Int).Mul(big.NewInt(100), unit))
	chain.Transact(t, 0, votes, token, "delegate", chain.Address(0))
	chain.Transact(t, 1, votes, token, "delegate", chain.Address(0))
	chain.Finalize(t)

	p := startPetal(t, map[string]string{"PETAL_EVM_CHAINS": "1337", "PETAL_EVM_RPC_1337": chain.URL})
	res, body := p.do(t, http.MethodGet, "/api/v1/networks", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var networks struct {
		Networks []struct {
			ID     string          `json:"id"`
			Chains []string        `json:"chains"`
			Params json.RawMessage `json:"params"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &networks))
	listed := map[string]string{}
	for _, n := range networks.Networks {
		listed[n.ID] = string(n.Params)
	}
	require.Contains(t, listed, "evm-erc20-holders")
	require.Contains(t, listed, "evm-erc20-delegates")
	assert.Contains(t, listed["evm-erc20-holders"], `"from_block"`)

	params := fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, token.Hex())
	res, body = p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"evm-erc20-holders","params":`+params+`,"fresh":true}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var answer struct {
		SHA256     string `json:"sha256"`
		Count      int    `json:"count"`
		StoredOnly bool   `json:"stored_only"`
		TargetKey  string `json:"target_key"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &answer))
	assert.Equal(t, 3, answer.Count)
	assert.Equal(t, `evm-erc20-holders{"chain":"eip155:1337","token":"`+strings.ToLower(token.Hex())+`"}`, answer.TargetKey)

	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+answer.SHA256, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var snap struct {
		Chain    string `json:"chain"`
		Accounts []struct{ ID, Weight string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &snap))
	assert.Equal(t, "eip155:1337", snap.Chain)
	assert.Equal(t, "eip155:1337:"+strings.ToLower(chain.Address(0).Hex()), snap.Accounts[0].ID)
	assert.Equal(t, "600", snap.Accounts[0].Weight)

	// Drawn like any other reading.
	drawnAsSVG(t, p, answer.SHA256)

	// Over MCP: the stored reading, and the delegates read fresh.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	var tokenParams map[string]any
	require.NoError(t, json.Unmarshal([]byte(params), &tokenParams))
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_snapshot", Arguments: map[string]any{"network": "evm-erc20-holders", "params": tokenParams}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	stored := out.StructuredContent.(map[string]any)
	assert.Equal(t, answer.SHA256, stored["sha256"])
	assert.Equal(t, true, stored["stored_only"])

	out, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_snapshot", Arguments: map[string]any{"network": "evm-erc20-delegates", "params": tokenParams, "fresh": true}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	delegates := out.StructuredContent.(map[string]any)
	assert.EqualValues(t, 1, delegates["count"], "both holders delegated to the first")
	assert.Equal(t, "PVT delegates", delegates["title"])

	// look_up knows the token by its address: an ERC20Votes, read next as its holders.
	res, body = p.do(t, http.MethodGet, "/api/v1/look-up?query="+token.Hex()+"&chain=eip155:1337", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var look struct {
		Account   string `json:"account"`
		ChainSays struct {
			Exists bool   `json:"exists"`
			Kind   string `json:"kind"`
			Detail struct {
				Symbol   string `json:"symbol"`
				Decimals int    `json:"decimals"`
			} `json:"detail"`
		} `json:"chain_says"`
		Next struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		} `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &look))
	assert.Equal(t, strings.ToLower(token.Hex()), look.Account)
	assert.Equal(t, "erc20_votes", look.ChainSays.Kind)
	assert.Equal(t, "PVT", look.ChainSays.Detail.Symbol)
	assert.Equal(t, 18, look.ChainSays.Detail.Decimals)
	assert.Equal(t, "get_snapshot", look.Next.Tool)
	assert.JSONEq(t, `{"network":"evm-erc20-holders","params":{"chain":"eip155:1337","token":"`+strings.ToLower(token.Hex())+`"}}`, string(look.Next.Args))
	// An address with no contract is no token.
	res, body = p.do(t, http.MethodGet, "/api/v1/look-up?query="+chain.Address(2).Hex()+"&chain=eip155:1337", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	look.ChainSays.Kind, look.Next.Tool = "", "" // null leaves a field as it was
	require.NoError(t, json.Unmarshal([]byte(body), &look))
	assert.Empty(t, look.ChainSays.Kind)
	assert.Equal(t, "list_networks", look.Next.Tool)

	// A chain without a setting is bad input, naming the setting.
	other := fmt.Sprintf(`{"chain":"eip155:100","token":"%s"}`, common.Address{1}.Hex())
	res, body = p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"evm-erc20-holders","params":`+other+`,"fresh":true}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "PETAL_EVM_RPC_100")
	res, body = p.do(t, http.MethodGet, "/api/v1/look-up?query=x&chain=eip155:100", "")
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "PETAL_EVM_RPC_100")
}

// Two tokens' holders read from a real EVM (one over HTTP, one over MCP),
// drawn, published by a signed-in wallet, on the map under their tokens'
// CAIP-10 ids, and in relations: the holder of both sits in both groups.
func TestEVMReadingsArePublishedOnTheMapAndInRelations(t *testing.T) {
	t.Parallel()
	chain := evmtest.NewChain(t, evmtest.Options{Accounts: 3})
	votes := evmtest.Contracts(t)["PetalVotes"]
	first, second := chain.Deploy(t, votes), chain.Deploy(t, votes)
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	tokens := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), unit) }
	chain.Transact(t, 0, votes, first, "mint", chain.Address(0), tokens(500))
	chain.Transact(t, 0, votes, first, "mint", chain.Address(1), tokens(200))
	chain.Transact(t, 0, votes, second, "mint", chain.Address(1), tokens(50))
	chain.Transact(t, 0, votes, second, "mint", chain.Address(2), tokens(80))
	chain.Finalize(t)
	p, rpc := signInPetal(t, map[string]string{"PETAL_EVM_CHAINS": "1337", "PETAL_EVM_RPC_1337": chain.URL})
	x := &publishing{p: p, rpc: rpc}
	x.cookie, _ = signInAlice(t, p)

	// The first read fresh over HTTP, the second over MCP.
	params := func(token common.Address) string {
		return fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, strings.ToLower(token.Hex()))
	}
	res, body := p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"evm-erc20-holders","params":`+params(first)+`,"fresh":true}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var answer struct {
		SHA256 string `json:"sha256"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &answer))
	shas := []string{answer.SHA256}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	var secondParams map[string]any
	require.NoError(t, json.Unmarshal([]byte(params(second)), &secondParams))
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_snapshot", Arguments: map[string]any{"network": "evm-erc20-holders", "params": secondParams, "fresh": true}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	shas = append(shas, out.StructuredContent.(map[string]any)["sha256"].(string))

	mapIDs := []string{"eip155:1337:" + strings.ToLower(first.Hex()), "eip155:1337:" + strings.ToLower(second.Hex())}
	for i, sha := range shas {
		res, body := p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var proposal struct {
			Spec json.RawMessage `json:"spec"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &proposal))
		x.spec = proposal.Spec
		a := x.prepare(t, fmt.Sprintf("Token %d", i+1))
		f, _, _, problems := published.Parse(a.Flower)
		require.Empty(t, problems)
		assert.Equal(t, mapIDs[i], f.Map, "a token's map is its CAIP-10 id, in lower case")
		x.send(t, a)
		res, body = x.publish(t, "alice.testnet", a.ID)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}

	// On the map, each under its token.
	res, body = p.do(t, http.MethodGet, "/api/v1/maps", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var cards struct {
		Maps []struct {
			ID   string  `json:"id"`
			Name *string `json:"name"`
		} `json:"maps"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &cards))
	var onMap []string
	for _, c := range cards.Maps {
		onMap = append(onMap, c.ID)
	}
	assert.ElementsMatch(t, mapIDs, onMap)
	for _, id := range mapIDs {
		res, body = p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(id), "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		assert.Contains(t, body, `"id":"`+id+`"`)
	}

	// In relations: the holder of both tokens is in both groups, the others in one.
	both := "eip155:1337:" + strings.ToLower(chain.Address(1).Hex())
	res, body = p.do(t, http.MethodGet, "/api/v1/relations/account-groups?account="+url.QueryEscape(both), "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var groups struct {
		Groups []struct {
			Group  string `json:"group"`
			Weight string `json:"weight"`
		} `json:"groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &groups))
	got := map[string]string{}
	for _, g := range groups.Groups {
		got[g.Group] = g.Weight
	}
	assert.Equal(t, map[string]string{mapIDs[0]: "200", mapIDs[1]: "50"}, got)
	res, body = p.do(t, http.MethodGet, "/api/v1/relations/shared?group_a="+url.QueryEscape(mapIDs[0])+"&group_b="+url.QueryEscape(mapIDs[1]), "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, both)
	assert.NotContains(t, body, strings.ToLower(chain.Address(0).Hex()))
	// And over MCP, alike.
	out, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "account_groups", Arguments: map[string]any{"account": both}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	assert.Len(t, out.StructuredContent.(map[string]any)["groups"], 2)
}

// A real Baal's proposals read over HTTP, published, and served by
// GET /api/v1/maps/:id/proposals as proposals/v2, like a Sputnik DAO's.
func TestABaalsProposalsAreServedOnItsMap(t *testing.T) {
	t.Parallel()
	chain := evmtest.NewChain(t, evmtest.Options{Accounts: 4})
	b := chain.BaalStory(t)
	p, rpc := signInPetal(t, map[string]string{"PETAL_EVM_CHAINS": "1337", "PETAL_EVM_RPC_1337": chain.URL})
	x := &publishing{p: p, rpc: rpc}
	x.cookie, _ = signInAlice(t, p)
	dao := strings.ToLower(b.Address.Hex())
	res, body := p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"evm-baal-proposals","params":{"chain":"eip155:1337","dao":"`+dao+`"},"fresh":true}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var answer struct {
		SHA256 string `json:"sha256"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &answer))
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+answer.SHA256+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var proposal struct {
		Spec json.RawMessage `json:"spec"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &proposal))
	x.spec = proposal.Spec
	a := x.prepare(t, "The Baal's votes")
	x.send(t, a)
	res, body = x.publish(t, "alice.testnet", a.ID)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	mapID := "eip155:1337:" + dao
	res, body = p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(mapID)+"/proposals", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var got struct {
		Proposals struct {
			Schema string `json:"schema"`
			Map    string `json:"map"`
			Source struct {
				Kind, Contract, Snapshot string
			} `json:"source"`
			Proposals []struct {
				ID, Title, Outcome string
				AsSaid             string  `json:"as_said"`
				Proposer           string  `json:"proposer"`
				DecidedAt          *string `json:"decided_at"`
				Votes              []struct {
					Account string
					Vote    string
					Power   string
				}
			} `json:"proposals"`
		} `json:"proposals"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	pr := got.Proposals
	assert.Equal(t, "proposals/v2", pr.Schema)
	assert.Equal(t, mapID, pr.Map)
	assert.Equal(t, "baal", pr.Source.Kind)
	assert.Equal(t, dao, pr.Source.Contract)
	assert.Equal(t, answer.SHA256, pr.Source.Snapshot)
	require.Len(t, pr.Proposals, 4)
	var outcomes []string
	for _, q := range pr.Proposals {
		outcomes = append(outcomes, q.ID+" "+q.Outcome+" "+q.AsSaid)
	}
	assert.Equal(t, []string{"4 open Submitted", "3 open Voting", "2 removed Cancelled", "1 approved Processed"}, outcomes)
	one := pr.Proposals[3]
	assert.Equal(t, "Fund the garden", one.Title)
	assert.Equal(t, "eip155:1337:"+strings.ToLower(chain.Address(0).Hex()), one.Proposer)
	require.NotNil(t, one.DecidedAt)
	require.Len(t, one.Votes, 2)
}

// A real Baal's members (shares and loot, from its two tokens) through the
// wired service: look_up knows the Baal by its tokens and names the reader,
// which is read fresh over MCP with look_up's own args, served over HTTP,
// drawn, published, on the map under the Baal's address, found by search
// and look_up, and in relations.
func TestABaalsMembersThroughHTTPAndMCPOnTheMapAndInRelations(t *testing.T) {
	chain := evmtest.NewChain(t, evmtest.Options{Accounts: 4})
	b := chain.SummonBaal(t, evmtest.BaalOptions{
		Shares: map[int]*big.Int{0: evmtest.Units(100), 1: evmtest.Units(50)}, Loot: map[int]*big.Int{2: evmtest.Units(30), 1: evmtest.Units(10)},
		VotingPeriod: 3600, Grace: 60,
	})
	chain.Finalize(t)
	p, rpc := signInPetal(t, map[string]string{"PETAL_EVM_CHAINS": "1337", "PETAL_EVM_RPC_1337": chain.URL})
	x := &publishing{p: p, rpc: rpc}
	x.cookie, _ = signInAlice(t, p)
	dao := strings.ToLower(b.Address.Hex())
	id := func(i int) string { return "eip155:1337:" + strings.ToLower(chain.Address(i).Hex()) }
	mapID := "eip155:1337:" + dao

	// look_up knows it by its tokens, over HTTP and over MCP alike.
	res, body := p.do(t, http.MethodGet, "/api/v1/look-up?query="+b.Address.Hex()+"&chain=eip155:1337", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var look struct {
		Account   string `json:"account"`
		ChainSays struct {
			Kind, Probe string
			Detail      struct {
				SharesToken string `json:"shares_token"`
				LootToken   string `json:"loot_token"`
				Symbol      string `json:"symbol"`
				TotalShares string `json:"total_shares"`
			} `json:"detail"`
		} `json:"chain_says"`
		Next struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		} `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &look))
	assert.Equal(t, dao, look.Account)
	assert.Equal(t, "baal", look.ChainSays.Kind)
	assert.Equal(t, "sharesToken", look.ChainSays.Probe)
	assert.Equal(t, strings.ToLower(b.Shares.Hex()), look.ChainSays.Detail.SharesToken)
	assert.Equal(t, strings.ToLower(b.Loot.Hex()), look.ChainSays.Detail.LootToken)
	assert.Equal(t, "PBAAL", look.ChainSays.Detail.Symbol)
	assert.Equal(t, evmtest.Units(150).String(), look.ChainSays.Detail.TotalShares)
	assert.Equal(t, "get_snapshot", look.Next.Tool)
	assert.JSONEq(t, `{"network":"evm-baal-members","params":{"chain":"eip155:1337","dao":"`+dao+`"}}`, string(look.Next.Args))

	// Its tokens are ERC-20s: the shares ERC20Votes (getVotes answers), the loot not.
	for _, tok := range []struct {
		at   common.Address
		kind string
	}{{b.Shares, "erc20_votes"}, {b.Loot, "erc20"}} {
		res, body = p.do(t, http.MethodGet, "/api/v1/look-up?query="+tok.at.Hex()+"&chain=eip155:1337", "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var token struct {
			ChainSays struct{ Kind, Probe string } `json:"chain_says"`
			Next      struct {
				Args json.RawMessage `json:"args"`
				Why  string          `json:"why"`
			} `json:"next"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &token))
		assert.Equal(t, tok.kind, token.ChainSays.Kind)
		assert.Equal(t, map[string]string{"erc20": "decimals", "erc20_votes": "getVotes"}[tok.kind], token.ChainSays.Probe)
		assert.JSONEq(t, `{"network":"evm-erc20-holders","params":{"chain":"eip155:1337","token":"`+strings.ToLower(tok.at.Hex())+`"}}`, string(token.Next.Args))
		assert.Equal(t, tok.kind == "erc20_votes", strings.Contains(token.Next.Why, "evm-erc20-delegates"), token.Next.Why)
	}

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "look_up", Arguments: map[string]any{"query": mapID, "chain": "eip155:1337"}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	mcpLook, _ := json.Marshal(out.StructuredContent.(map[string]any)["next"])
	assert.JSONEq(t, `{"tool":"get_snapshot","args":`+string(look.Next.Args)+`,"why":"read the Baal's members by shares (voting) and loot (non-voting); evm-baal-proposals reads its proposals and votes"}`, string(mcpLook), "its CAIP-10 id is the same address")

	// Read fresh over MCP with look_up's args.
	var args map[string]any
	require.NoError(t, json.Unmarshal(look.Next.Args, &args))
	args["fresh"] = true
	out, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_snapshot", Arguments: args})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	read := out.StructuredContent.(map[string]any)
	assert.EqualValues(t, 3, read["count"])
	assert.Equal(t, "Members of PBAAL", read["title"])
	sha := read["sha256"].(string)

	// Served over HTTP: weights are shares plus loot, groups the tokens.
	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var snap struct {
		Network  string `json:"network"`
		Chain    string `json:"chain"`
		Accounts []struct {
			ID, Weight string
			Groups     []string
		}
		Groups []struct{ ID string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &snap))
	assert.Equal(t, "evm-baal-members", snap.Network)
	assert.Equal(t, "eip155:1337", snap.Chain)
	type member struct {
		id, weight string
		groups     string
	}
	var members []member
	for _, a := range snap.Accounts {
		members = append(members, member{a.ID, a.Weight, strings.Join(a.Groups, ",")})
	}
	assert.Equal(t, []member{{id(0), "100", "shares"}, {id(1), "60", "shares,loot"}, {id(2), "30", "loot"}}, members)
	require.Len(t, snap.Groups, 2)
	// The same over HTTP: stored, not read again.
	res, body = p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"evm-baal-members","params":{"chain":"eip155:1337","dao":"`+b.Address.Hex()+`"}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"sha256":"`+sha+`"`)
	assert.Contains(t, body, `"stored_only":true`)

	// Drawn, and published.
	x.spec = drawnAsSVG(t, p, sha)
	a := x.prepare(t, "The Baal's members")
	f, _, _, problems := published.Parse(a.Flower)
	require.Empty(t, problems)
	assert.Equal(t, mapID, f.Map, "a Baal's map is its own address, not its shares token's")
	x.send(t, a)
	res, body = x.publish(t, "alice.testnet", a.ID)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	// On the map.
	res, body = p.do(t, http.MethodGet, "/api/v1/maps", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var cards struct {
		Maps []struct{ ID string } `json:"maps"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &cards))
	require.Len(t, cards.Maps, 1)
	assert.Equal(t, mapID, cards.Maps[0].ID)
	res, body = p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(mapID), "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"id":"`+mapID+`"`)

	// In search, and so in look_up's map: the flower by its name, the map by the Baal's address.
	type found struct{ Kind, ID, Title, Map string }
	res, body = p.do(t, http.MethodGet, "/api/v1/search?q="+url.QueryEscape("Baal's members")+"&kinds=flower", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var search struct{ Results []found }
	require.NoError(t, json.Unmarshal([]byte(body), &search))
	require.Len(t, search.Results, 1, body)
	assert.Equal(t, found{"flower", a.ID, "The Baal's members", mapID}, search.Results[0])
	var held struct {
		Map struct {
			Maps, Flowers []found
			Groups        []struct{ Group, Weight string }
		} `json:"map"`
		ChainSays struct{ Kind *string } `json:"chain_says"`
	}
	res, body = p.do(t, http.MethodGet, "/api/v1/look-up?query="+dao+"&chain=eip155:1337", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &held))
	require.Len(t, held.Map.Maps, 1, body)
	assert.Equal(t, mapID, held.Map.Maps[0].ID)
	require.Len(t, held.Map.Flowers, 1, body)
	assert.Equal(t, a.ID, held.Map.Flowers[0].ID)
	// A member's own address: no contract, but in the Baal's group.
	res, body = p.do(t, http.MethodGet, "/api/v1/look-up?query="+url.QueryEscape(id(1))+"&chain=eip155:1337", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	held.ChainSays.Kind = nil
	require.NoError(t, json.Unmarshal([]byte(body), &held))
	assert.Nil(t, held.ChainSays.Kind)
	require.Len(t, held.Map.Groups, 1, body)
	assert.Equal(t, mapID, held.Map.Groups[0].Group)
	assert.Equal(t, "60", held.Map.Groups[0].Weight)

	// In relations: each member in the Baal's group at its weight, over HTTP and MCP.
	for i, want := range []string{"100", "60", "30"} {
		res, body = p.do(t, http.MethodGet, "/api/v1/relations/account-groups?account="+url.QueryEscape(id(i)), "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var groups struct {
			Groups []struct {
				Group  string `json:"group"`
				Weight string `json:"weight"`
			} `json:"groups"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &groups))
		require.Len(t, groups.Groups, 1, body)
		assert.Equal(t, mapID, groups.Groups[0].Group)
		assert.Equal(t, want, groups.Groups[0].Weight, "member %d", i)
	}
	out, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "account_groups", Arguments: map[string]any{"account": id(1)}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	got := out.StructuredContent.(map[string]any)["groups"].([]any)
	require.Len(t, got, 1)
	assert.Equal(t, mapID, got[0].(map[string]any)["group"])
}

// drawnAsSVG proposes a spec for the reading sha and renders it as SVG, as a
// person drawing it would, and answers the spec.
func drawnAsSVG(t *testing.T, p *testPetal, sha string) json.RawMessage {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var proposal struct {
		Spec json.RawMessage `json:"spec"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &proposal))
	res, body = p.do(t, http.MethodPost, "/api/v1/render?format=svg", `{"spec":`+string(proposal.Spec)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, "<svg")
	return proposal.Spec
}
