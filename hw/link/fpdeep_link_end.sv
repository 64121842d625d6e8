// fpdeep reliable link end: one board's side of a link port, a framer for what it sends on
// tx_* and a deframer for what arrives on rx_*. The deframer's word about received frames
// (ACK, NAK, credit) leaves in the framer's control frames, and the peer's control frames
// arriving on rx_* steer the framer: one full-duplex link carries both directions'
// data and acknowledgements. Counters per direction for the CSR; `stuck` and `overflow`
// are the link's error flags.
`default_nettype none

module fpdeep_link_end #(
    parameter int W      = 64,
    parameter int TAGW   = 16,
    parameter int SEQW   = 8,
    parameter int FW     = 4,
    parameter int MAXLEN = 64,
    parameter int RD     = 1024,
    parameter int RXD    = 1024
) (
    input  wire logic            clk,
    input  wire logic            rst,
    input  wire logic [31:0]     cfg_timeout,
    input  wire logic [31:0]     cfg_stuck,
    input  wire logic [31:0]     cfg_refresh,
    input  wire logic [31:0]     cfg_holdoff,
    input  wire logic [15:0]     cfg_maxlen,    // payload words a frame sent, at most; 0: MAXLEN
    input  wire logic [W-1:0]    s_data,
    input  wire logic [TAGW-1:0] s_tag,
    input  wire logic            s_last,
    input  wire logic            s_valid,
    output logic                 s_ready,
    output logic [W-1:0]         m_data,
    output logic [TAGW-1:0]      m_tag,
    output logic                 m_last,
    output logic                 m_valid,
    input  wire logic            m_ready,
    output logic [W-1:0]         tx_data,
    output logic                 tx_last,
    output logic                 tx_valid,
    input  wire logic            tx_ready,
    input  wire logic [W-1:0]    rx_data,
    input  wire logic            rx_last,
    input  wire logic            rx_valid,
    output logic                 rx_ready,
    output logic [31:0]          tx_frames,
    output logic [31:0]          tx_replays,
    output logic [31:0]          tx_timeouts,
    output logic [31:0]          tx_credit_stalls,
    output logic [31:0]          rx_frames,
    output logic [31:0]          rx_crc_errors,
    output logic [31:0]          rx_discards,
    output logic                 stuck,
    output logic                 overflow
);
    logic            peer_valid, peer_nak, adv_ack, adv_nak;
    logic [SEQW-1:0] peer_seq, adv_seq;
    logic [31:0]     peer_credit, adv_credit;

    fpdeep_link_framer #(.W(W), .TAGW(TAGW), .SEQW(SEQW), .FW(FW), .MAXLEN(MAXLEN), .RD(RD)) u_tx (
        .clk, .rst, .cfg_timeout, .cfg_stuck, .cfg_refresh, .cfg_maxlen,
        .s_data, .s_tag, .s_last, .s_valid, .s_ready,
        .m_data(tx_data), .m_last(tx_last), .m_valid(tx_valid), .m_ready(tx_ready),
        .peer_valid, .peer_nak, .peer_seq, .peer_credit, .adv_ack, .adv_nak, .adv_seq,
        .adv_credit, .frames(tx_frames), .replays(tx_replays), .timeouts(tx_timeouts),
        .credit_stalls(tx_credit_stalls), .stuck);

    fpdeep_link_deframer #(.W(W), .TAGW(TAGW), .SEQW(SEQW), .MAXLEN(MAXLEN), .RXD(RXD)) u_rx (
        .clk, .rst, .cfg_holdoff,
        .s_data(rx_data), .s_last(rx_last), .s_valid(rx_valid), .s_ready(rx_ready),
        .m_data, .m_tag, .m_last, .m_valid, .m_ready,
        .peer_valid, .peer_nak, .peer_seq, .peer_credit, .adv_ack, .adv_nak, .adv_seq,
        .adv_credit, .frames(rx_frames), .crc_errors(rx_crc_errors), .discards(rx_discards),
        .overflow);
endmodule

`default_nettype wire
