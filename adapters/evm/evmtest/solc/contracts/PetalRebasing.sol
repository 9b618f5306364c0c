// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// A rebasing token, written by hand: balances are shares times a factor the
// owner changes without a Transfer, so its logs stop adding up after a rebase
// (as stETH's or AMPL's do). petal must refuse it, never draw it.
contract PetalRebasing {
    event Transfer(address indexed from, address indexed to, uint256 value);

    mapping(address => uint256) private shares;
    uint256 private totalShares;
    uint256 public factor = 1;

    function name() external pure returns (string memory) { return "Petal Rebasing"; }
    function symbol() external pure returns (string memory) { return "PRB"; }
    function decimals() external pure returns (uint8) { return 18; }
    function totalSupply() external view returns (uint256) { return totalShares * factor; }
    function balanceOf(address a) external view returns (uint256) { return shares[a] * factor; }

    function mint(address to, uint256 value) external {
        shares[to] += value / factor;
        totalShares += value / factor;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        shares[msg.sender] -= value / factor;
        shares[to] += value / factor;
        emit Transfer(msg.sender, to, value);
        return true;
    }

    function rebase(uint256 newFactor) external { factor = newFactor; }
}
