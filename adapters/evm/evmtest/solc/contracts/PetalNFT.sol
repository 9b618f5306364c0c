// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

// OpenZeppelin's ERC-721 as it comes, minting open to anyone: an NFT, whose
// Transfer has the ERC-20 event's topic with the token id indexed, and no
// decimals. petal must say it is no ERC-20, never read it as one.
contract PetalNFT is ERC721 {
    constructor() ERC721("Petal NFT", "PNFT") {}

    function mint(address to, uint256 id) external { _mint(to, id); }
}
