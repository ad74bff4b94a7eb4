"""What scores a candidate inside the loop: the checklist judge (`assess`), the holistic
baseline's judge (`holistic`) and the request's own checks with no judge (`requirements`);
all three share the `assess` / `reflect` interface the controller calls."""
