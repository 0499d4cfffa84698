#!/usr/bin/env python3
"""file-churn.py DIR MODE N LIVE SIZE: keeps LIVE files of SIZE bytes in DIR and
replaces the oldest N times, as an LSM's compactions do. MODE 'create':
create a new file and unlink the oldest; 'recycle': truncate the oldest and
rename it to the new name, then rewrite it (no inode allocated). Prints
user/system CPU seconds and wall seconds of the N replacements."""
import os, sys, time
d, mode, n, live, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
os.makedirs(d, exist_ok=True)
buf = os.urandom(size)
names = []
nxt = 0
def write(path, flags):
    fd = os.open(path, flags, 0o644)
    os.write(fd, buf)
    os.close(fd)
for _ in range(live):
    p = os.path.join(d, f"{nxt:08d}.sst"); nxt += 1
    write(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    names.append(p)
t0, w0 = os.times(), time.time()
for _ in range(n):
    old = names.pop(0)
    p = os.path.join(d, f"{nxt:08d}.sst"); nxt += 1
    if mode == "create":
        write(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.unlink(old)
    else:
        os.truncate(old, 0)
        os.rename(old, p)
        write(p, os.O_WRONLY | os.O_TRUNC)
    names.append(p)
t1, w1 = os.times(), time.time()
print(f"{mode} n={n} live={live} size={size} user={t1.user-t0.user:.2f} sys={t1.system-t0.system:.2f} wall={w1-w0:.2f} sys_us_per_file={(t1.system-t0.system)/n*1e6:.1f}")
for p in names:
    os.unlink(p)
