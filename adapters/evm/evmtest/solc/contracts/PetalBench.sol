// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

// OpenZeppelin's ERC20 with two ways to make many Transfers cheaply, for the
// read benchmark: seed mints to holders [start, start+count), shuffle makes
// count transfers among the first n holders. Holders are fixed addresses
// (holder(i)), so a benchmark's chain needs no keys per holder.
contract PetalBench is ERC20 {
    constructor() ERC20("Petal Bench", "PBN") {}

    function holder(uint256 i) public pure returns (address) {
        return address(uint160(0x1000000 + i));
    }

    function seed(uint256 start, uint256 count, uint256 value) external {
        for (uint256 i = start; i < start + count; i++) {
            _mint(holder(i), value);
        }
    }

    // Transfer k goes from holder(k*7919 % n) to holder((k*104729 + 1) % n),
    // 1,000 to 1,999 units: far less than any holder was seeded with.
    function shuffle(uint256 start, uint256 count, uint256 n) external {
        for (uint256 k = start; k < start + count; k++) {
            _transfer(holder((k * 7919) % n), holder((k * 104729 + 1) % n), 1000 + (k % 1000));
        }
    }
}
