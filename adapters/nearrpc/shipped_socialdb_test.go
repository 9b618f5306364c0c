package nearrpc_test

import (
	"testing"
	"testing/fstest"

	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/domain/errs"
)

// The shipped copies answer get, keys and get_accounts_paged as SocialDB
// would: * is one key, ** everything below, accounts in order, a page at a
// time, and nothing from another network's folder.
func TestShippedSocialDBAnswersLikeSocialDB(t *testing.T) {
	files := fstest.MapFS{
		"mainnet/a.json": {Data: []byte(`{"bob.near":{"petal":{"flower":{"b1":"{}"}}},"alice.near":{"petal":{"flower":{"a1":"one","a2":"two"},"other":"x"}}}`)},
		"testnet/t.json": {Data: []byte(`{"carol.testnet":{"petal":{"flower":{"c1":"three"}}}}`)},
		"README.md":      {Data: []byte("not read")},
	}
	s, err := nearrpc.NewShippedSocialDB(files)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	vals, err := s.Get(ctx, "near:mainnet", []string{"alice.near/petal/flower/*"}, 1<<20)
	if err != nil || len(vals) != 2 || vals[0].Path != "alice.near/petal/flower/a1" || vals[1].Value != "two" {
		t.Fatalf("get: %+v %v", vals, err)
	}
	keys, err := s.Keys(ctx, "near:mainnet", []string{"*/petal/flower/*"}, 1<<20)
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys: %+v %v", keys, err)
	}
	if all, _ := s.Get(ctx, "near:mainnet", []string{"alice.near/**"}, 1<<20); len(all) != 3 {
		t.Fatalf("** is everything below: %+v", all)
	}
	if _, err := s.Get(ctx, "near:mainnet", []string{"*/petal/flower/*"}, 5); !errs.Is(err, errs.CannotRead) {
		t.Fatalf("an answer past maxBytes: %v", err)
	}
	page, _ := s.Accounts(ctx, "near:mainnet", 0, 1)
	next, _ := s.Accounts(ctx, "near:mainnet", 1, 1)
	end, _ := s.Accounts(ctx, "near:mainnet", 2, 1)
	if len(page) != 1 || page[0] != "alice.near" || len(next) != 1 || next[0] != "bob.near" || len(end) != 0 {
		t.Fatalf("accounts: %v %v %v", page, next, end)
	}
	if test, _ := s.Keys(ctx, "near:testnet", []string{"*/petal/flower/*"}, 1<<20); len(test) != 1 || test[0].Path != "carol.testnet/petal/flower/c1" {
		t.Fatalf("testnet: %+v", test)
	}
	if _, err := nearrpc.NewShippedSocialDB(fstest.MapFS{"mainnet/bad.json": {Data: []byte(`{"a.near":[1]}`)}}); err == nil {
		t.Fatal("a file not in SocialDB's shape was taken")
	}
}
