// Shopping cart used by the storefront.

function lineTotal(item) {
  return item.price * item.quantity;
}

function cartTotal(items, coupon) {
  let total = 0;
  for (const item of items) {
    total += lineTotal(item);
  }
  if (coupon && coupon.percent) {
    total = total - (total * coupon.percent) / 100;
  }
  return Math.round(total * 100) / 100;
}

function removeItem(items, sku) {
  return items.filter((item) => item.sku !== sku);
}

module.exports = { lineTotal, cartTotal, removeItem };
