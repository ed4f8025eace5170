/**
 * A DiSNI provider backed by SoftRdma: DiSNI 2.1's provider SPI ({@code RdmaProvider},
 * {@code RdmaVerbs}, {@code RdmaCm} and the stateful verb calls) implemented over the verbs port of a
 * {@link io.jsdp.testbed.SoftDevice}, installed into DiSNI by reflection ({@link io.jsdp.testbed.disni.SoftDisni#install()}).
 * DiSNI's own classes, and the {@code verbs-disni} adapter over them, then run on machines without RDMA
 * hardware.
 *
 * <p>The shim translates; it does not re-implement a device. Where libdisni behaves in a way a caller can
 * trip over, the shim behaves the same (project reference {@code disni.md}, A.1): work requests are
 * snapshot when the call object is made; a polled error completion updates only {@code wr_id},
 * {@code status} and {@code opcode} of its reused {@code IbvWC} and leaves the rest stale; queue pairs have
 * four scatter/gather entries whatever the caller asks and ignore {@code sq_sig_all}; addresses are IPv4;
 * CM events carry no status and no private data; destroying an object marks its handle closed before the
 * device is asked, so a refused destroy leaves a closed handle; failures are {@code IOException}s whose text
 * carries the {@code strerror} of the errno, as libdisni's JNI code writes them. Queue-pair timers come
 * from the "fabric", as they do from librdmacm: the caller cannot set them.
 */
package io.jsdp.testbed.disni;
