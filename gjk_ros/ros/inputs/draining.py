# Copyright 2026 gjk_ros maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Latest wins: take what has already arrived on a subscription, inside its callback.

rclpy's executors hand a subscription callback one message per wait. When the work that
follows a message (for ``/tf``, a compute cycle) takes longer than the publisher's period, the
reader queue (100 deep for ``/tf``, tf2_ros's depth) fills and the node works through an ever
older backlog: its outputs lag by the whole queue, 0.5 to 1 s at 100 Hz, until their data passes
``tf_timeout``. A callback that first takes the messages already waiting, and only then does its
work, does that work once, on the newest data; no queue can build latency.

The messages are still handled one by one (every ``/tf`` message goes into the buffer, whose
history serves interpolation); only the work after them is shared. ``limit`` bounds one
callback's draining to a queue's worth, so a publisher faster than the handling cannot keep the
executor in one callback forever (the next callback drains the rest).
"""

from rclpy.exceptions import InvalidHandle

__all__ = ['take_waiting']


def take_waiting(subscription, limit, with_info=False):
    """
    Yield the messages waiting in ``subscription``'s reader queue, at most ``limit`` of them.

    They come oldest first, as the executor would have delivered them, in the subscription's
    own form (bytes for a raw subscription); with ``with_info``, each as (message, its message
    info), the dict rclpy passes a two-argument callback. A subscription destroyed meanwhile
    yields nothing.
    """
    for _ in range(limit):
        try:
            with subscription.handle:
                taken = subscription.handle.take_message(subscription.msg_type,
                                                         subscription.raw)
        except InvalidHandle:
            return
        if taken is None:
            return
        yield taken if with_info else taken[0]
