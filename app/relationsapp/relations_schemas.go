package relationsapp

import "github.com/petal-near/petal/app/toolkit"

// The relations tools' answers as JSON Schemas (each tool's Output).

const accountGroupsSchema = `{"type":"object","required":["account","groups","next_cursor"],"properties":{
"account":{"type":"string"},
"groups":{"type":"array","items":{"type":"object","required":["group","title","weight","share","rank"],"properties":{
 "group":{"type":"string","description":"a map id"},"title":{"type":"string"},
 "weight":{"type":"string","description":"the account's weight in the group's newest reading, decimal text"},
 "share":{"type":"string","description":"weight over the group's total, decimal text rounded once to 12 places"},
 "rank":{"type":"integer","description":"1 for the largest share; equal shares share a rank"}}}},
` + toolkit.NextCursorSchema + `}}`

const weightShareSchema = `{"type":"object","required":["weight","share"],"properties":{"weight":{"type":"string"},"share":{"type":"string"}}}`

const sharedAccountsSchema = `{"type":"object","required":["group_a","group_b","count","accounts","next_cursor"],"properties":{
"group_a":{"type":"string"},"group_b":{"type":"string"},
"count":{"type":"integer","description":"how many accounts the two groups share"},
"accounts":{"type":"array","items":{"type":"object","required":["account","a","b"],"properties":{
 "account":{"type":"string"},"a":` + weightShareSchema + `,"b":` + weightShareSchema + `}}},
` + toolkit.NextCursorSchema + `}}`

const relatedGroupsSchema = `{"type":"object","required":["group","by","related","next_cursor"],"properties":{
"group":{"type":"string"},"by":{"type":"string"},
"related":{"type":"array","items":{"type":"object","required":["group","title","shared","jaccard","weight_in_group"],"properties":{
 "group":{"type":"string"},"title":{"type":"string"},"shared":{"type":"integer"},
 "jaccard":{"type":"string","description":"shared over the union of the two groups' accounts, decimal text rounded once to 12 places"},
 "weight_in_group":{"type":"string","description":"the share of the related group the shared accounts hold"}}}},
` + toolkit.NextCursorSchema + `}}`

const relationsOverviewSchema = `{"type":"object","required":["groups","pairs","next_cursor"],"properties":{
"groups":{"type":"array","items":{"type":"object","required":["group","title","kind","count"],"properties":{
 "group":{"type":"string"},"title":{"type":"string"},"kind":{"type":"string"},"count":{"type":"integer","description":"its accounts"}}}},
"pairs":{"type":"array","items":{"type":"object","required":["a","b","shared","jaccard"],"properties":{
 "a":{"type":"string"},"b":{"type":"string"},"shared":{"type":"integer"},"jaccard":{"type":"string"}}}},
` + toolkit.NextCursorSchema + `}}`

const powerPathSchema = `{"type":"object","required":["found","paths","expanded","exhausted"],"properties":{
"found":{"type":"boolean"},
"paths":{"type":"array","items":{"type":"object","required":["hops"],"properties":{"hops":{"type":"array","items":{"type":"object","required":["account","via_group","weight_in_group"],"properties":{
 "account":{"type":"string"},"via_group":{"type":["string","null"]},"weight_in_group":{"type":["string","null"]},"via_claim":{"type":"string"}}}}}}},
"expanded":{"type":"integer","description":"memberships the search followed"},
"exhausted":{"type":"boolean","description":"the budget stopped the search before it was done"},
"notes":{"type":"array","items":{"type":"string"}}}}`
