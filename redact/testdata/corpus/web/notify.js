// Notifications to chat and payments webhooks.
const SLACK_TOKEN = 'xoxb-72803852808-414852538885-OoNZYW2mZp0zVZomHFwUbbYr';
const stripe = require('stripe')('sk_live_EqmSM9wCZ7Uw9xfogoEmvnEN');
const mapsKey = "AIzaa9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBd";
const session = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0NzExIiwibmFtZSI6IkFkYSBCeXJvbiIsImlhdCI6MTc2NDU0NzIwMH0.74GDqQ7EyIMttFPSuEPyHnvnzXtsMM3JznnJAX7ebZ3";

/** Post a message to a channel. */
async function post(channel, text) {
  const res = await fetch('https://slack.com/api/chat.postMessage', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SLACK_TOKEN}` },
    body: JSON.stringify({ channel, text }),
  });
  return res.ok;
}

/** Format an amount in cents as a price. */
function price(cents, currency = 'EUR') {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(cents / 100);
}

module.exports = { post, price, mapsKey, session, stripe };
