package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// /account: what Petal knows of one account a petal is, where a person
// lands by clicking it: the groups on the map it belongs to (account_groups,
// through the registry with its limits), each a link to its map.

// accountBody is /account's.
type accountBody struct {
	Account string
	Name    string // the account part of its CAIP-10 id
	Groups  []relationsapp.AccountGroup
	More    bool // there are more groups than one page shows
	Demo    bool // the groups are the demo map's made-up readings
	Unknown string
}

func (s *Server) accountPage(c echo.Context) error {
	id := strings.TrimSpace(c.QueryParam("id"))
	if id == "" {
		return s.errorPage(c, errs.New(errs.BadInput, "this address names no account",
			"click a petal of a flower, or open /account?id=near:mainnet:<account>"), "map")
	}
	input, err := json.Marshal(map[string]any{"account": id, "limit": 50})
	if err != nil {
		return s.errorPage(c, err, "map")
	}
	body := accountBody{Account: id, Name: id[strings.LastIndexByte(id, ':')+1:]}
	out, err := s.deps.Registry.Call(c.Request().Context(), relationsapp.ToolAccountGroups, toolkit.Call{Input: input, Caller: s.caller(c)})
	switch {
	case errs.Is(err, errs.NotFound):
		body.Unknown = "Petal knows this account from the drawing only: it is in no group on this site's map yet."
		if s.deps.Maps != nil { // an account of the demo map's made-up readings
			groups, ok, derr := s.deps.Maps.DemoAccountGroups(c.Request().Context(), id)
			if derr != nil {
				return s.errorPage(c, derr, "map")
			}
			if ok {
				body.Unknown, body.Groups, body.Demo = "", groups, true
			}
		}
	case err != nil:
		return s.errorPage(c, err, "map")
	default:
		answer, ok := out.(relationsapp.AccountGroupsAnswer)
		if !ok {
			return s.errorPage(c, errs.New(errs.Internal, "account_groups answered something other than groups"), "map")
		}
		body.Groups, body.More = answer.Groups, answer.NextCursor != nil
	}
	return s.renderPage(c, http.StatusOK, "account.tmpl", pageShell{Title: body.Name, Nav: "map", Signed: s.signed(c), Body: body})
}
