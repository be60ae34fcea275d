module.exports = require("b4a").from("helper");
