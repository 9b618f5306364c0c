// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Votes} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Votes.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

// OpenZeppelin's ERC20Votes as it comes, with mint and burn open to anyone
// (a test token) and scatter: many transfers in one transaction, so a test
// chain holds a benchmark's million transfers in few blocks.
contract PetalVotes is ERC20, ERC20Votes {
    constructor() ERC20("Petal Votes", "PVT") EIP712("Petal Votes", "1") {}

    function mint(address to, uint256 value) external { _mint(to, value); }

    function burn(address from, uint256 value) external { _burn(from, value); }

    // scatter sends values[i] from the sender to recipients[i], each a Transfer.
    function scatter(address[] calldata recipients, uint256[] calldata values) external {
        for (uint256 i = 0; i < recipients.length; i++) {
            _transfer(msg.sender, recipients[i], values[i]);
        }
    }

    function _update(address from, address to, uint256 value) internal override(ERC20, ERC20Votes) {
        super._update(from, to, value);
    }
}
