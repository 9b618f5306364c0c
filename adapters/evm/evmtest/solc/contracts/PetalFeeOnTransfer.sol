// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// A fee-on-transfer token, written by hand: each transfer logs the whole
// value but credits the recipient 2% less, the fee going to the token's
// keeper without a Transfer log (as some fee-taking tokens do). The supply
// still adds up; the balances its logs make don't. petal must refuse it.
contract PetalFeeOnTransfer {
    event Transfer(address indexed from, address indexed to, uint256 value);

    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;
    address public immutable keeper = msg.sender;

    function name() external pure returns (string memory) { return "Petal Fee"; }
    function symbol() external pure returns (string memory) { return "PFEE"; }
    function decimals() external pure returns (uint8) { return 18; }

    function mint(address to, uint256 value) external {
        balanceOf[to] += value;
        totalSupply += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        uint256 fee = value / 50;
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value - fee;
        balanceOf[keeper] += fee;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
